package analyzer

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/viper"
	gitleaks "github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/report"
)

// Limits of a repository's gitleaks files.
const (
	MaxGitleaksConfigBytes = 256 << 10
	MaxGitleaksIgnoreBytes = 1 << 20
)

// RepoSecrets is what a repository says of secrets in gitleaks' own files,
// read from the base revision (a pull request cannot allowlist its own
// secret): the allowlists of its .gitleaks.toml ([[allowlists]] and the
// older [allowlist]: paths, regexes with their regexTarget, stop words,
// commits, the AND/OR condition, targetRules) and its [extend]
// disabledRules, and the fingerprints of its .gitleaksignore
// (file:rule:line and commit:file:rule:line). MergeGuard runs gitleaks'
// default rules: a repository's own [[rules]] are not run (a note says so).
type RepoSecrets struct {
	global   []*gitleaks.Allowlist
	byRule   map[string][]*gitleaks.Allowlist
	disabled map[string]bool
	ignore   map[string]bool
	// Notes say what of the files was not used.
	Notes []string
}

// Empty reports whether rs changes nothing.
func (rs *RepoSecrets) Empty() bool {
	return rs == nil || len(rs.global)+len(rs.byRule)+len(rs.disabled)+len(rs.ignore) == 0
}

// ParseRepoSecrets reads a repository's .gitleaks.toml and .gitleaksignore
// (either may be nil). A configuration gitleaks would refuse is an error
// naming the file; the caller keeps the defaults and says so.
func ParseRepoSecrets(toml, ignore []byte) (*RepoSecrets, error) {
	rs := &RepoSecrets{byRule: map[string][]*gitleaks.Allowlist{}, disabled: map[string]bool{}, ignore: map[string]bool{}}
	if len(toml) > MaxGitleaksConfigBytes {
		return nil, fmt.Errorf(".gitleaks.toml is larger than %d KiB", MaxGitleaksConfigBytes>>10)
	}
	if len(ignore) > MaxGitleaksIgnoreBytes {
		return nil, fmt.Errorf(".gitleaksignore is larger than %d KiB", MaxGitleaksIgnoreBytes>>10)
	}
	if len(bytes.TrimSpace(toml)) > 0 {
		if err := rs.readConfig(toml); err != nil {
			return nil, fmt.Errorf(".gitleaks.toml: %w", err)
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(ignore))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
			rs.ignore[l] = true
		}
	}
	return rs, nil
}

// readConfig takes the allowlists and disabled rules of a gitleaks
// configuration, translated by gitleaks itself. Its [extend] is not
// followed (the default rules are MergeGuard's already; a path or URL is
// never read) and its [[rules]] are left out.
func (rs *RepoSecrets) readConfig(toml []byte) error {
	v := viper.New()
	v.SetConfigType("toml")
	if err := v.ReadConfig(bytes.NewReader(toml)); err != nil {
		return err
	}
	var vc gitleaks.ViperConfig
	if err := v.Unmarshal(&vc); err != nil {
		return err
	}
	if vc.Extend.Path != "" || vc.Extend.URL != "" {
		rs.Notes = append(rs.Notes, "its [extend] path or URL is not read: MergeGuard extends gitleaks' default rules only")
	}
	if len(vc.Rules) > 0 {
		rs.Notes = append(rs.Notes, fmt.Sprintf("its %d [[rules]] are not run: MergeGuard runs gitleaks' default rules with the file's allowlists", len(vc.Rules)))
	}
	for _, id := range vc.Extend.DisabledRules {
		rs.disabled[id] = true
	}
	if vc.AllowList != nil && len(vc.Allowlists) == 0 {
		vc.Allowlists, vc.AllowList = append(vc.Allowlists, vc.AllowList), nil
	}
	// Translate checks a targeted allowlist's rule exists among the file's
	// own rules: take the targets out, and put them back by position.
	targets := make([][]string, len(vc.Allowlists))
	for i, a := range vc.Allowlists {
		targets[i], a.TargetRules = a.TargetRules, nil
	}
	vc.Rules, vc.Extend = nil, gitleaks.Extend{}
	cfg, err := translate(&vc)
	if err != nil {
		return err
	}
	if len(cfg.Allowlists) != len(targets) {
		return fmt.Errorf("gitleaks translated %d allowlists of %d", len(cfg.Allowlists), len(targets))
	}
	for i, a := range cfg.Allowlists {
		if len(targets[i]) == 0 {
			rs.global = append(rs.global, a)
		}
		for _, id := range targets[i] {
			rs.byRule[id] = append(rs.byRule[id], a)
		}
	}
	return nil
}

// translate is gitleaks' Translate, whose regular expressions are
// compiled with MustCompile: a bad one in a repository's file panics,
// which is its error here.
func translate(vc *gitleaks.ViperConfig) (cfg gitleaks.Config, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	return vc.Translate()
}

// pathAllowed reports whether a file is allowlisted whole: by an
// allowlist whose path or commit alone decides (gitleaks' OR condition,
// or AND with nothing else to check).
func (rs *RepoSecrets) pathAllowed(path, commit string) bool {
	if rs == nil {
		return false
	}
	for _, a := range rs.global {
		pathOK, commitOK := a.PathAllowed(path), commitAllowed(a, commit)
		if a.MatchCondition == gitleaks.AllowlistMatchAnd {
			if len(a.Regexes)+len(a.StopWords) == 0 && (len(a.Paths) == 0 || pathOK) && (len(a.Commits) == 0 || commitOK) &&
				len(a.Paths)+len(a.Commits) > 0 {
				return true
			}
			continue
		}
		if pathOK || commitOK {
			return true
		}
	}
	return false
}

// allowed reports whether a hit is allowlisted or ignored: disabled rule,
// a global or the rule's allowlist (as gitleaks' checkFindingAllowed
// decides), or a .gitleaksignore fingerprint of the file, the rule and
// the line (with the commit, when it is the one reviewed).
func (rs *RepoSecrets) allowed(hit report.Finding, path, commit, line string, num int) bool {
	if rs == nil {
		return false
	}
	if rs.disabled[hit.RuleID] {
		return true
	}
	fp := path + ":" + hit.RuleID + ":" + strconv.Itoa(num)
	if rs.ignore[fp] || (commit != "" && rs.ignore[commit+":"+fp]) {
		return true
	}
	for _, lists := range [][]*gitleaks.Allowlist{rs.global, rs.byRule[hit.RuleID]} {
		for _, a := range lists {
			if findingAllowed(a, hit, path, commit, line) {
				return true
			}
		}
	}
	return false
}

// findingAllowed is gitleaks' rule for one allowlist and a finding: with
// the OR condition a regex (on the secret, the match or the line, as
// regexTarget says) or a stop word allows it; with AND every criterion
// the allowlist has must hold.
func findingAllowed(a *gitleaks.Allowlist, hit report.Finding, path, commit, line string) bool {
	target := hit.Secret
	switch a.RegexTarget {
	case "match":
		target = hit.Match
	case "line":
		target = line
	}
	regexOK := a.RegexAllowed(target)
	stopOK, _ := a.ContainsStopWord(hit.Secret)
	if a.MatchCondition != gitleaks.AllowlistMatchAnd {
		return regexOK || stopOK
	}
	checks := []struct {
		has, ok bool
	}{
		{len(a.Commits) > 0, commitAllowed(a, commit)},
		{len(a.Paths) > 0, a.PathAllowed(path)},
		{len(a.Regexes) > 0, regexOK},
		{len(a.StopWords) > 0, stopOK},
	}
	some := false
	for _, c := range checks {
		if c.has && !c.ok {
			return false
		}
		some = some || c.has
	}
	return some
}

// commitAllowed reports whether an allowlist names the commit.
func commitAllowed(a *gitleaks.Allowlist, commit string) bool {
	ok, _ := a.CommitAllowed(commit)
	return ok
}
