package analyzer

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/spf13/viper"
	gitleaks "github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/diff"
)

// Secrets finds credentials in added lines with gitleaks' default rules.
// The secret itself is never copied into a finding: the finding names the
// rule and the line, and its snippet is left empty.
type Secrets struct {
	detector func() (*detect.Detector, error)
}

// NewSecrets returns the secret scanner. The gitleaks rule set (about 200
// compiled regular expressions, ~30 ms) is built on first use and shared.
func NewSecrets() *Secrets {
	return &Secrets{detector: sync.OnceValues(newDetector)}
}

// newDetector builds a gitleaks detector with the default configuration. It
// does what detect.NewDetectorDefaultConfig does, but on its own viper
// instance: that function uses viper's process-wide instance, which is not
// safe to use from concurrent reviews.
func newDetector() (*detect.Detector, error) {
	v := viper.New()
	v.SetConfigType("toml")
	if err := v.ReadConfig(strings.NewReader(gitleaks.DefaultConfig)); err != nil {
		return nil, fmt.Errorf("read gitleaks default config: %w", err)
	}
	var vc gitleaks.ViperConfig
	if err := v.Unmarshal(&vc); err != nil {
		return nil, fmt.Errorf("decode gitleaks default config: %w", err)
	}
	cfg, err := vc.Translate()
	if err != nil {
		return nil, fmt.Errorf("translate gitleaks default config: %w", err)
	}
	return detect.NewDetector(cfg), nil
}

// Name implements Analyzer.
func (*Secrets) Name() string { return "analyzer:secrets" }

// Analyze scans the added lines of each file, as one text per file so that
// multi-line secrets (PEM blocks) are seen whole, and maps every hit back to
// its new-side lines.
func (s *Secrets) Analyze(ctx context.Context, files []*diff.File) ([]review.Finding, error) {
	det, err := s.detector()
	if err != nil {
		return nil, err
	}
	var out []review.Finding
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		if !scannable(f) {
			continue
		}
		out = append(out, s.scan(det, f, addedLines(f))...)
	}
	return out, nil
}

// Long lines (minified code, data) are scanned in windows: gitleaks' rules
// run each regular expression over the whole fragment whose keywords they
// find, so one 1 MB line took 10 s, and 4 KB windows take 0.5 s. Windows
// overlap by more than any secret gitleaks knows is long, so none is cut.
const (
	longLine      = 4 << 10
	windowOverlap = 512
)

// scan finds the secrets in the added lines of f: the ordinary lines as one
// text, so that multi-line secrets (PEM blocks) are seen whole, each long
// line in overlapping windows.
func (s *Secrets) scan(det *detect.Detector, f *diff.File, lines []addedLine) []review.Finding {
	var (
		b    strings.Builder
		long []int
		out  []review.Finding
	)
	for i, l := range lines {
		if len(l.text) > longLine {
			long = append(long, i)
			b.WriteByte('\n') // keeps gitleaks' line numbers those of lines
			continue
		}
		b.WriteString(l.text)
		b.WriteByte('\n')
	}
	for _, hit := range det.DetectString(b.String()) {
		// gitleaks numbers the lines of the scanned text from 0.
		if hit.StartLine < 0 || hit.StartLine >= len(lines) {
			continue
		}
		end := min(max(hit.EndLine, hit.StartLine), len(lines)-1)
		start, stop := lines[hit.StartLine], lines[end]
		if stop.hunk != start.hunk {
			stop = start // a comment range must stay inside one hunk
		}
		out = append(out, secretFinding(s.Name(), f, start.num, stop.num, hit.RuleID, hit.Description, heuristicRule(det, hit.RuleID)))
	}
	for _, i := range long {
		out = append(out, s.scanLong(det, f, lines[i])...)
	}
	return out
}

// scanLong scans one long line in overlapping windows, reporting each rule
// once for the line.
func (s *Secrets) scanLong(det *detect.Detector, f *diff.File, l addedLine) []review.Finding {
	var out []review.Finding
	seen := map[string]bool{}
	for at := 0; at < len(l.text); at += longLine - windowOverlap {
		for _, hit := range det.DetectString(l.text[at:min(len(l.text), at+longLine)]) {
			if !seen[hit.RuleID] {
				seen[hit.RuleID] = true
				out = append(out, secretFinding(s.Name(), f, l.num, l.num, hit.RuleID, hit.Description, heuristicRule(det, hit.RuleID)))
			}
		}
		if at+longLine >= len(l.text) {
			break
		}
	}
	return out
}

// keywordRule starts the regular expression of gitleaks' keyword-proximity
// rules (its generateSemiGenericRegex): any token of the right alphabet
// and length assigned near a service's name, such as "datadog".
const keywordRule = `(?i)[\w.-]{0,50}?(?:`

// heuristicRule reports whether a gitleaks rule is a heuristic: a generic
// rule (a high-entropy value assigned to a secret-looking name) or a
// keyword-proximity rule. The others match a token's own format (a fixed
// prefix such as AKIA, ghp_ or xoxb-, or a PEM block) and are exact.
func heuristicRule(det *detect.Detector, id string) bool {
	if strings.Contains(id, "generic") {
		return true
	}
	r, ok := det.Config.Rules[id]
	return !ok || r.Regex == nil || strings.HasPrefix(r.Regex.String(), keywordRule)
}

// secretFinding describes a gitleaks hit without the secret. A heuristic
// rule's finding gets a confidence below ExactConfidence.
func secretFinding(agent string, f *diff.File, start, end int, rule, desc string, heuristic bool) review.Finding {
	sev, conf := review.SeverityCritical, 0.9
	switch {
	case strings.Contains(rule, "generic"):
		// The generic rules match any high-entropy assignment to a
		// secret-looking name: still worth a look, but not a blocker.
		sev, conf = review.SeverityWarning, 0.6
	case heuristic:
		conf = heuristicConfidence
	}
	return finding(agent, f, start, end, sev, review.CategorySecurity, conf,
		"Possible secret committed ("+rule+")",
		fmt.Sprintf("An added line matches the gitleaks rule %q: %s. The value is not repeated here. "+
			"Anything pushed to a shared repository must be treated as leaked.", rule, strings.TrimRight(strings.TrimSpace(desc), ".")),
		"Remove the value from the change, rotate the credential, and load it from the environment or a secret store.",
		"")
}
