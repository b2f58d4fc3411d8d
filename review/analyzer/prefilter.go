package analyzer

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	ahocorasick "github.com/BobuSumisu/aho-corasick"
	gitleaks "github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/report"
)

// detectors is gitleaks' default rule set arranged so that a file's added
// text is scanned once, and cheaply where it cannot hold a secret, with the
// findings gitleaks itself gives on that text:
//
//   - every rule but the generic one runs on the whole text, behind
//     gitleaks' keyword prefilter (a rule runs only on a text holding one
//     of its keywords, so a text with none costs one keyword search);
//   - the generic rule, which matches a high-entropy value assigned to a
//     secret-looking name and took nine tenths of the time, runs only on the
//     lines where such an assignment can start (see genericText), the
//     other lines blanked so that line numbers stay;
//   - a generic finding that another rule also made on its line is dropped,
//     as gitleaks does.
//
// When the generic rule is not the one this is written for (a newer
// gitleaks), every rule runs on the whole text.
type detectors struct {
	cfg   gitleaks.Config          // the configuration the rules are of
	rules map[string]gitleaks.Rule // every rule, by id
	// scanned are cfg's global allowlists without their paths, which a
	// repository's configuration extends (see pathless).
	scanned []*gitleaks.Allowlist
	rest    *detect.Detector // every rule but the generic one
	generic *detect.Detector // the generic rule alone; nil: rest has every rule
	// keywords finds the generic rule's keywords in ASCII-lower-cased
	// text (gitleaks finds the other rules' own).
	keywords *ahocorasick.Trie
	// lower holds *[]byte buffers for the lower-cased texts.
	lower sync.Pool
}

// genericRuleID and genericRegex are gitleaks v8's generic rule, whose
// structure genericCandidate relies on.
const (
	genericRuleID = "generic-api-key"
	genericRegex  = `(?i)[\w.-]{0,50}?(?:access|auth|(?-i:[Aa]pi|API)|credential|creds|key|passw(?:or)?d|secret|token)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([\w.=-]{10,150}|[a-z0-9][a-z0-9+/]{11,}={0,3})(?:[\x60'"\s;]|\\[nr]|$)`
)

// genericCandidate is what every match of genericRegex holds from its
// keyword on, anchored at the keyword: the name's rest, the operator and
// the value's first characters. A keyword where it does not match starts
// no generic match.
var genericCandidate = regexp.MustCompile(`\A(?i)(?:access|auth|api|credential|creds|key|passw(?:or)?d|secret|token)[ \t\w.-]{0,20}[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}(?:[\w.=-]{10}|[a-z0-9][a-z0-9+/]{11})`)

// candidateSpan bounds the text genericCandidate is tried on: longer than
// any of its matches.
const candidateSpan = 128

// newDetectors builds the default rule set, whole and split.
func newDetectors() (*detectors, error) {
	cfg, err := defaultConfig()
	if err != nil {
		return nil, err
	}
	d := detectorsFor(cfg)
	if d.scanned, err = pathless(cfg.Allowlists); err != nil {
		return nil, err
	}
	return d, nil
}

// pathless returns the global allowlists of gitleaks' default
// configuration without their paths: those skip lock files, vendored code
// and images whole, which MergeGuard scans for secrets all the same (a key
// moved into go.sum is leaked all the same). An allowlist of paths alone
// is left out.
func pathless(lists []*gitleaks.Allowlist) ([]*gitleaks.Allowlist, error) {
	var out []*gitleaks.Allowlist
	for _, a := range lists {
		if a.MatchCondition == gitleaks.AllowlistMatchAnd && len(a.Paths) > 0 {
			continue // its other checks hold only with the paths
		}
		b := &gitleaks.Allowlist{Description: a.Description, MatchCondition: a.MatchCondition, Commits: a.Commits,
			RegexTarget: a.RegexTarget, Regexes: a.Regexes, StopWords: a.StopWords}
		if len(b.Commits)+len(b.Regexes)+len(b.StopWords) == 0 {
			continue
		}
		if err := b.Validate(); err != nil {
			return nil, fmt.Errorf("gitleaks default allowlist: %w", err)
		}
		out = append(out, b)
	}
	return out, nil
}

// detectorsFor builds the rule set of cfg, whole and split.
func detectorsFor(cfg gitleaks.Config) *detectors {
	d := &detectors{cfg: cfg, rules: cfg.Rules}
	var words []string
	for _, k := range cfg.Rules[genericRuleID].Keywords {
		words = append(words, strings.ToLower(k))
	}
	d.keywords = ahocorasick.NewTrieBuilder().AddStrings(words).Build()
	g, ok := cfg.Rules[genericRuleID]
	if !ok || g.Regex == nil || g.Regex.String() != genericRegex || g.Path != nil || countGeneric(cfg) != 1 {
		d.rest = detect.NewDetector(cfg)
		return d
	}
	d.rest = detect.NewDetector(subConfig(cfg, func(id string) bool { return id != genericRuleID }))
	d.generic = detect.NewDetector(subConfig(cfg, func(id string) bool { return id == genericRuleID }))
	return d
}

// countGeneric counts the rules gitleaks treats as generic (their findings
// give way to another rule's on the same line).
func countGeneric(cfg gitleaks.Config) int {
	n := 0
	for id := range cfg.Rules {
		if strings.Contains(strings.ToLower(id), "generic") {
			n++
		}
	}
	return n
}

// subConfig is cfg with only the rules keep keeps, and their keywords.
func subConfig(cfg gitleaks.Config, keep func(id string) bool) gitleaks.Config {
	c := cfg
	c.Rules = map[string]gitleaks.Rule{}
	c.Keywords = map[string]struct{}{}
	c.OrderedRules = nil
	for _, id := range cfg.OrderedRules {
		r, ok := cfg.Rules[id]
		if !ok || !keep(id) {
			continue
		}
		c.Rules[id] = r
		c.OrderedRules = append(c.OrderedRules, id)
		for _, k := range r.Keywords {
			c.Keywords[strings.ToLower(k)] = struct{}{}
		}
	}
	return c
}

// where is the file and commit a text is of: gitleaks' path and commit
// allowlists apply to it when set (a repository's own configuration).
type where struct{ path, commit string }

// detect returns gitleaks' findings on text.
func (d *detectors) detect(text string, at where) []report.Finding {
	if d.generic == nil || hasFoldTraps(text) {
		return d.whole(text, at)
	}
	buf, _ := d.lower.Get().(*[]byte)
	if buf == nil {
		buf = new([]byte)
	}
	*buf = asciiLower((*buf)[:0], text)
	var starts []int // where the generic rule's keywords start
	d.keywords.Walk(*buf, func(end, n, _ int64) bool {
		starts = append(starts, int(end-n+1))
		return true
	})
	d.lower.Put(buf)
	// gitleaks looks for the other rules' keywords first and runs only the
	// rules it finds one of: a text with none costs that search alone.
	found := d.rest.Detect(fragment(text, at))
	sparse, ok := genericText(text, starts)
	if !ok {
		return found
	}
	return withGeneric(found, d.generic.Detect(fragment(sparse, at)))
}

// fragment is text of at as gitleaks scans it.
func fragment(text string, at where) detect.Fragment { //nolint:staticcheck // gitleaks v8's API until v9's sources.Fragment
	return detect.Fragment{Raw: text, FilePath: at.path, CommitSHA: at.commit} //nolint:staticcheck // as above
}

// whole runs every rule on the whole text: gitleaks' findings there.
func (d *detectors) whole(text string, at where) []report.Finding {
	found := d.rest.Detect(fragment(text, at))
	if d.generic == nil {
		return found
	}
	return withGeneric(found, d.generic.Detect(fragment(text, at)))
}

// withGeneric adds to the other rules' findings the generic findings they
// do not shadow.
func withGeneric(found, generic []report.Finding) []report.Finding {
	others := len(found)
	for _, g := range generic {
		if !shadowed(g, found[:others]) {
			found = append(found, g)
		}
	}
	return found
}

// shadowed reports whether another rule found a secret holding g's on g's
// line: gitleaks then drops the generic finding.
func shadowed(g report.Finding, others []report.Finding) bool {
	for _, o := range others {
		if o.StartLine == g.StartLine && o.Commit == g.Commit && o.RuleID != g.RuleID &&
			strings.Contains(o.Secret, g.Secret) && !strings.Contains(strings.ToLower(o.RuleID), "generic") {
			return true
		}
	}
	return false
}

// hasFoldTraps reports whether text holds a character that lower-cases or
// case-folds to an ASCII letter of a keyword (the Kelvin sign, the dotted
// capital I, the long s): only ASCII is lower-cased for the keyword search,
// so such a text is scanned the slow, exact way.
func hasFoldTraps(text string) bool {
	return strings.Contains(text, "\u212a") || strings.Contains(text, "\u0130") || strings.Contains(text, "\u017f")
}

// asciiLower appends text to b with its ASCII letters lower-cased, byte
// for byte: positions in it are positions in text.
func asciiLower(b []byte, text string) []byte {
	b = append(b, text...)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return b
}

// genericText returns text with every line blanked (to a NUL byte, which
// no part of the generic rule matches) except where a generic match can
// be: a line where genericCandidate matches at a keyword, the lines after
// it that hold only whitespace, quotes and operators (a match may run over
// up to eight line breaks between the name and the value), and the line
// after those. ok is false when no line is left.
func genericText(text string, starts []int) (string, bool) {
	slices.Sort(starts)
	starts = slices.Compact(starts)
	var keep []int // line numbers, ascending
	line, lineStart := 0, 0
	for _, p := range starts {
		for {
			nl := strings.IndexByte(text[lineStart:], '\n')
			if nl < 0 || lineStart+nl >= p {
				break
			}
			lineStart += nl + 1
			line++
		}
		if (len(keep) > 0 && keep[len(keep)-1] == line) || !genericCandidate.MatchString(text[p:min(len(text), p+candidateSpan)]) {
			continue
		}
		keep = append(keep, line)
	}
	if len(keep) == 0 {
		return "", false
	}
	var b strings.Builder
	b.Grow(len(text))
	k, window, bridges := 0, false, 0
	for n, rest := 0, text; rest != ""; n++ {
		l, after, _ := strings.Cut(rest, "\n")
		rest = after
		switch {
		case k < len(keep) && keep[k] == n:
			k++
			window, bridges = true, 8
			b.WriteString(l)
		case window:
			b.WriteString(l)
			if isBridge(l) && bridges > 0 {
				bridges--
			} else {
				window = false // the value's line ends the window
			}
		default:
			b.WriteByte(0)
		}
		b.WriteByte('\n')
	}
	return b.String(), true
}

// isBridge reports whether a line can sit inside a generic match that
// spans lines: only whitespace, quotes, backquotes and operator characters.
func isBridge(l string) bool {
	for i := 0; i < len(l); i++ {
		if !strings.ContainsRune(" \t\r\v\f'\"`=>:|?,", rune(l[i])) {
			return false
		}
	}
	return true
}
