package analyzer

import (
	"fmt"
	"regexp"
	"strings"

	gitleaks "github.com/zricethezav/gitleaks/v8/config"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/text"
)

// SecretsRepo is what a repository says about secrets, for one review:
// its gitleaks files read from the base revision and its
// .mergeguard.yml's secrets.block_in_tests.
type SecretsRepo struct {
	// Gitleaks is .gitleaks.toml at the base revision; nil when there is
	// none.
	Gitleaks []byte
	// Ignore is .gitleaksignore at the base revision; nil when there is
	// none.
	Ignore []byte
	// Commit is the head commit, which commit fingerprints and commit
	// allowlists are matched against.
	Commit string
	// BlockInTests makes a secret in a test-fixture path block like any
	// other (see IsTestFixture).
	BlockInTests bool
}

// secretPolicy is a SecretsRepo made ready for the secret detectors. The
// zero policy is gitleaks' default rules, no fingerprint ignored, and
// fixture paths not blocking.
type secretPolicy struct {
	// paths passes each file's path and the commit to gitleaks, whose
	// path and commit allowlists then apply: set with the repository's
	// own configuration.
	paths        bool
	commit       string
	ignore       map[string]struct{}
	allowlists   []*gitleaks.Allowlist
	blockInTests bool
}

// ForRepo returns analyzers configured for one review of a repository:
// the secret detectors with repo's gitleaks configuration, fingerprints
// and fixture rule, the others as they are. notes say what of repo could
// not be used; the default rules then apply.
func ForRepo(analyzers []Analyzer, repo SecretsRepo) (out []Analyzer, notes []string) {
	pol := &secretPolicy{commit: repo.Commit, ignore: gitleaksIgnore(repo.Ignore), blockInTests: repo.BlockInTests}
	var det *detectors
	if repo.Gitleaks != nil {
		var err error
		if det, err = repoDetectors(analyzers, repo.Gitleaks); err != nil {
			notes = append(notes, fmt.Sprintf("The repository's %s on the base branch was not used (%s): gitleaks' default rules applied.",
				GitleaksConfigFile, text.ClipBytes(err.Error(), 300)))
		} else if det != nil {
			pol.paths, pol.allowlists = true, det.cfg.Allowlists
		}
	}
	for _, a := range analyzers {
		switch a := a.(type) {
		case *Secrets:
			s := &Secrets{detector: a.detector, policy: pol}
			if det != nil {
				s.detector = func() (*detectors, error) { return det, nil }
			}
			out = append(out, s)
		case PrivateKeys:
			out = append(out, PrivateKeys{policy: pol})
		default:
			out = append(out, a)
		}
	}
	return out, notes
}

// repoDetectors builds the detectors of a repository's configuration over
// the default one of the first *Secrets among analyzers; nil without one.
func repoDetectors(analyzers []Analyzer, data []byte) (*detectors, error) {
	for _, a := range analyzers {
		s, ok := a.(*Secrets)
		if !ok {
			continue
		}
		base, err := s.detector()
		if err != nil {
			return nil, err
		}
		cfg, err := repoGitleaksConfig(data, base.cfg, base.scanned)
		if err != nil {
			return nil, err
		}
		return detectorsFor(cfg), nil
	}
	return nil, nil
}

// ignored reports whether .gitleaksignore lists the finding of rule at
// line of path, by its global or its commit fingerprint.
func (p *secretPolicy) ignored(path, rule string, line int) bool {
	if p == nil || len(p.ignore) == 0 {
		return false
	}
	global := fmt.Sprintf("%s:%s:%d", path, rule, line)
	if _, ok := p.ignore[global]; ok {
		return true
	}
	_, ok := p.ignore[p.commit+":"+global]
	return ok && p.commit != ""
}

// pathAllowed reports whether the repository's global allowlists skip
// path or the commit (an allowlist that also needs a regex or stop word
// to match does not: the private-key check has no secret to match them).
func (p *secretPolicy) pathAllowed(path string) bool {
	if p == nil {
		return false
	}
	for _, a := range p.allowlists {
		if len(a.Regexes)+len(a.StopWords) > 0 && a.MatchCondition == gitleaks.AllowlistMatchAnd {
			continue
		}
		commit, _ := a.CommitAllowed(p.commit)
		if a.PathAllowed(path) || commit {
			return true
		}
	}
	return false
}

// fixture lowers a secret finding in a test-fixture path to a warning of
// a heuristic's confidence, which the verifier marks likely at best and
// so never blocks, unless the repository blocks secrets in tests.
func (p *secretPolicy) fixture(f review.Finding) review.Finding {
	if (p != nil && p.blockInTests) || !IsTestFixture(f.FilePath) {
		return f
	}
	if f.Severity.Rank() > review.SeverityWarning.Rank() {
		f.Severity = review.SeverityWarning
	}
	f.Confidence = min(f.Confidence, heuristicConfidence)
	f.Description += " The file is a test fixture by its path: reported without blocking (secrets.block_in_tests: true makes it block)."
	return f
}

// privateKeyHeader is a PEM private-key header of any kind, as gitleaks'
// private-key rule starts.
var privateKeyHeader = regexp.MustCompile(`-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----`)

// minKeyLine is the length from which a line of base64 is key material:
// PEM bodies are 64 characters a line, their last line shorter.
const minKeyLine = 40

// hasKeyMaterial reports whether lines, which start a PEM private key,
// hold its material: a line of at least minKeyLine base64 characters
// after the header (on the header's line too, where the key is a string
// with \n escapes), past the Proc-Type and DEK-Info headers and blank
// lines. A header alone, or one followed by a placeholder, is not a key.
func hasKeyMaterial(lines []string) bool {
	text := strings.Join(lines, "\n")
	loc := privateKeyHeader.FindStringIndex(text)
	if loc == nil {
		return false
	}
	rest := strings.NewReplacer(`\\n`, "\n", `\n`, "\n", `\r`, "").Replace(text[loc[1]:])
	for _, l := range strings.Split(rest, "\n") {
		l = strings.Trim(l, " \t\r\"'`,;+\\")
		switch {
		case l == "" || strings.Contains(l, ":"):
			continue // blank, or a PEM header such as Proc-Type
		case len(l) >= minKeyLine && isBase64(l):
			return true
		default:
			return false
		}
	}
	return false
}

// isBase64 reports whether s is made of base64 characters only, and of
// more than a handful of them (a run of X is no key).
func isBase64(s string) bool {
	seen := map[byte]bool{}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 'A' || c > 'Z') && (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '+' && c != '/' && c != '=' {
			return false
		}
		seen[c] = true
	}
	return len(seen) >= 16
}

// fileLines returns the texts of lines[from..to] of a file's added lines.
func fileLines(lines []AddedLine, from, to int) []string {
	out := make([]string, 0, to-from+1)
	for i := from; i <= to && i < len(lines); i++ {
		out = append(out, lines[i].Text)
	}
	return out
}

// keyFinding lowers a private-key finding without key material to info,
// at a heuristic's confidence: a header alone never blocks.
func keyFinding(f review.Finding, material bool) review.Finding {
	if material {
		return f
	}
	f.Severity, f.Confidence = review.SeverityInfo, min(f.Confidence, heuristicConfidence)
	f.Title = "Private key header without key material"
	f.Description = "An added line holds a PEM private-key header, but no key material follows it in the change: likely a sample or a parser's constant. Check that no key is committed elsewhere."
	return f
}
