package analyzer

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/viper"
	gitleaks "github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/report"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/diff"
)

// Secrets finds credentials in added lines with gitleaks' default rules.
// The secret itself is never copied into a finding: the finding names the
// rule and the line, and its snippet is left empty.
type Secrets struct {
	detector func() (*detectors, error)
	// policy is the repository's (ForRepo); nil: the defaults.
	policy *secretPolicy
}

// NewSecrets returns the secret scanner. The gitleaks rule set (about 200
// compiled regular expressions, ~30 ms) is built on first use and shared.
func NewSecrets() *Secrets {
	return &Secrets{detector: sync.OnceValues(newDetectors)}
}

// defaultConfig reads gitleaks' default configuration. It does what
// detect.NewDetectorDefaultConfig does, but on its own viper instance: that
// function uses viper's process-wide instance, which is not safe to use
// from concurrent reviews.
func defaultConfig() (gitleaks.Config, error) {
	v := viper.New()
	v.SetConfigType("toml")
	if err := v.ReadConfig(strings.NewReader(gitleaks.DefaultConfig)); err != nil {
		return gitleaks.Config{}, fmt.Errorf("read gitleaks default config: %w", err)
	}
	var vc gitleaks.ViperConfig
	if err := v.Unmarshal(&vc); err != nil {
		return gitleaks.Config{}, fmt.Errorf("decode gitleaks default config: %w", err)
	}
	words := takeStopWords(&vc)
	cfg, err := vc.Translate()
	if err != nil {
		return gitleaks.Config{}, fmt.Errorf("translate gitleaks default config: %w", err)
	}
	putStopWords(cfg, words)
	return cfg, nil
}

// stopWords are the stop words of a rule's allowlist, by rule id and the
// allowlist's place in the rule's list.
type stopWords map[string]map[int][]string

// takeStopWords takes the stop words out of the rules' allowlists that
// check something else too (an allowlist with nothing to check is an error
// to Translate). gitleaks matches stop words with an Aho-Corasick trie of
// 2 KB a state: the generic rule's 1,446 words make 8.7 MB, held as long
// as the rules are. putStopWords puts them back once translated, where
// gitleaks, finding no trie, compares them one by one with the secret of
// a finding, which its rule found first: the same allowlist, and a rare
// check.
func takeStopWords(vc *gitleaks.ViperConfig) stopWords {
	taken := stopWords{}
	for _, r := range vc.Rules {
		lists := r.Allowlists
		if r.AllowList != nil && len(lists) == 0 {
			lists = append(lists, r.AllowList) // Translate's order
		}
		for i, a := range lists {
			if len(a.StopWords) == 0 || len(a.Commits)+len(a.Paths)+len(a.Regexes) == 0 {
				continue
			}
			if taken[r.ID] == nil {
				taken[r.ID] = map[int][]string{}
			}
			taken[r.ID][i], a.StopWords = a.StopWords, nil
		}
	}
	return taken
}

// putStopWords puts the stop words taken by takeStopWords back into the
// translated rules' allowlists, lower-cased and without duplicates as
// gitleaks' own validation leaves them.
func putStopWords(cfg gitleaks.Config, taken stopWords) {
	for id, lists := range taken {
		r := cfg.Rules[id]
		for i, words := range lists {
			if i >= len(r.Allowlists) {
				continue // not reached: Translate keeps every allowlist, in order
			}
			seen := make(map[string]bool, len(words))
			var lower []string
			for _, w := range words {
				if w = strings.ToLower(w); !seen[w] {
					seen[w] = true
					lower = append(lower, w)
				}
			}
			r.Allowlists[i].StopWords = lower
		}
	}
}

// Name implements Analyzer.
func (*Secrets) Name() string { return "analyzer:secrets" }

// Analyze scans the added lines of each file, as one text per file so that
// multi-line secrets (PEM blocks) are seen whole, and maps every hit back to
// its new-side lines.
func (s *Secrets) Analyze(ctx context.Context, files []*diff.File) ([]review.Finding, error) {
	if err := s.prepare(); err != nil {
		return nil, err
	}
	return analyzeEach(ctx, s, files)
}

// prepare builds the rules, once.
func (s *Secrets) prepare() error {
	_, err := s.detector()
	return err
}

// AnalyzeFile implements FileAnalyzer. It finds nothing when the rules
// cannot be built, which Analyze and Run report.
func (s *Secrets) AnalyzeFile(_ context.Context, a *Added) []review.Finding {
	det, err := s.detector()
	if err != nil {
		return nil
	}
	return s.scan(det, a.File, a.Lines)
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
func (s *Secrets) scan(det *detectors, f *diff.File, lines []AddedLine) []review.Finding {
	var (
		b    strings.Builder
		long []int
		out  []review.Finding
	)
	size := 0
	for _, l := range lines {
		size += min(len(l.Text), longLine+1) + 1
	}
	b.Grow(size)
	for i, l := range lines {
		if len(l.Text) > longLine {
			long = append(long, i)
			b.WriteByte('\n') // keeps gitleaks' line numbers those of lines
			continue
		}
		b.WriteString(l.Text)
		b.WriteByte('\n')
	}
	at := s.where(f)
	hits := det.detect(b.String(), at)
	// gitleaks runs its rules in map order: sort for a stable report.
	slices.SortFunc(hits, func(a, b report.Finding) int {
		return cmp.Or(cmp.Compare(a.StartLine, b.StartLine), cmp.Compare(a.EndLine, b.EndLine), strings.Compare(a.RuleID, b.RuleID))
	})
	for _, hit := range hits {
		// gitleaks numbers the lines of the scanned text from 0.
		if hit.StartLine < 0 || hit.StartLine >= len(lines) {
			continue
		}
		end := min(max(hit.EndLine, hit.StartLine), len(lines)-1)
		start, stop := lines[hit.StartLine], lines[end]
		if stop.Hunk != start.Hunk {
			stop = start // a comment range must stay inside one hunk
		}
		if s.policy.ignored(f.Path(), hit.RuleID, start.Num) {
			continue
		}
		fd := secretFinding(s.Name(), f, start.Num, stop.Num, hit.RuleID, hit.Description, det.heuristicRule(hit.RuleID))
		if hit.RuleID == privateKeyRule {
			fd = keyFinding(fd, hasKeyMaterial(fileLines(lines, hit.StartLine, end)))
		}
		out = append(out, s.policy.fixture(fd))
	}
	for _, i := range long {
		out = append(out, s.scanLong(det, f, lines[i])...)
	}
	return out
}

// scanLong scans one long line in overlapping windows, reporting each rule
// once for the line.
func (s *Secrets) scanLong(det *detectors, f *diff.File, l AddedLine) []review.Finding {
	var out []review.Finding
	seen := map[string]bool{}
	for at := 0; at < len(l.Text); at += longLine - windowOverlap {
		for _, hit := range det.detect(l.Text[at:min(len(l.Text), at+longLine)], s.where(f)) {
			if seen[hit.RuleID] || s.policy.ignored(f.Path(), hit.RuleID, l.Num) {
				continue
			}
			seen[hit.RuleID] = true
			fd := secretFinding(s.Name(), f, l.Num, l.Num, hit.RuleID, hit.Description, det.heuristicRule(hit.RuleID))
			if hit.RuleID == privateKeyRule {
				fd = keyFinding(fd, hasKeyMaterial([]string{l.Text}))
			}
			out = append(out, s.policy.fixture(fd))
		}
		if at+longLine >= len(l.Text) {
			break
		}
	}
	return out
}

// privateKeyRule is gitleaks' rule for PEM private keys.
const privateKeyRule = "private-key"

// where is the file gitleaks is told a text is of: with the repository's
// own configuration, its path and the head commit, so that its path and
// commit allowlists apply; with the default one, none (MergeGuard scans
// the lock and vendored files gitleaks' default allowlist skips).
func (s *Secrets) where(f *diff.File) where {
	if s.policy == nil || !s.policy.paths {
		return where{}
	}
	return where{path: f.Path(), commit: s.policy.commit}
}

// keywordRule starts the regular expression of gitleaks' keyword-proximity
// rules (its generateSemiGenericRegex): any token of the right alphabet
// and length assigned near a service's name, such as "datadog".
const keywordRule = `(?i)[\w.-]{0,50}?(?:`

// heuristicRule reports whether a gitleaks rule is a heuristic: a generic
// rule (a high-entropy value assigned to a secret-looking name) or a
// keyword-proximity rule, or a rule that matches a constant text. The
// others match a token's own format (a fixed prefix such as AKIA, ghp_ or
// xoxb- and the token's own characters, or a PEM block) and are exact.
func (d *detectors) heuristicRule(id string) bool {
	if strings.Contains(id, "generic") {
		return true
	}
	r, ok := d.rules[id]
	if !ok || r.Regex == nil || strings.HasPrefix(r.Regex.String(), keywordRule) {
		return true
	}
	// A rule that matches one constant text (gitleaks' short-lived Bedrock
	// key rule matches the prefix every such key shares) finds no token.
	_, constant := r.Regex.LiteralPrefix()
	return constant
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
	fd := finding(agent, f, start, end, sev, review.CategorySecurity, conf,
		"Possible secret committed ("+rule+")",
		fmt.Sprintf("An added line matches the gitleaks rule %q: %s. The value is not repeated here. "+
			"Anything pushed to a shared repository must be treated as leaked.", rule, strings.TrimRight(strings.TrimSpace(desc), ".")),
		"Remove the value from the change, rotate the credential, and load it from the environment or a secret store.",
		"")
	fd.Rule = rule
	return fd
}
