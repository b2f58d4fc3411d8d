package analyzer

import (
	"bufio"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/viper"
	gitleaks "github.com/zricethezav/gitleaks/v8/config"
)

// The files a repository configures gitleaks with, read from the base
// revision of a change (never its head: a pull request cannot allowlist
// its own secret).
const (
	GitleaksConfigFile = ".gitleaks.toml"
	GitleaksIgnoreFile = ".gitleaksignore"
)

// Bounds of a repository's gitleaks files: larger ones are not read. The
// configuration's allowlists compile regular expressions and stop-word
// tries (2 KB a state), so its size bounds the memory a review spends.
const (
	MaxGitleaksConfigBytes = 64 << 10
	MaxGitleaksIgnoreBytes = 256 << 10
	// maxStopWordBytes bounds the stop words of one configuration.
	maxStopWordBytes = 16 << 10
)

// placeholderRegex stands in, during translation, for the regular
// expression of a rule that only amends a default rule of the same id
// (its allowlists, keywords): gitleaks validates the rule before extending
// it, and such a rule has none of its own.
const placeholderRegex = `\A\z[^\s\S]`

// repoGitleaksConfig translates a repository's .gitleaks.toml with
// gitleaks' own code, extended with def (gitleaks' default configuration)
// when it says [extend] useDefault = true. gitleaks' own extension reads
// files and the process-wide viper instance and counts its depth in a
// package variable, so it is not used: [extend] path and url are refused
// (a review reads no file of the server), and the default configuration is
// merged the way gitleaks merges it (extendConfig). A configuration that
// gitleaks would panic on (a bad regular expression) is an error.
func repoGitleaksConfig(data []byte, def gitleaks.Config, defLists []*gitleaks.Allowlist) (cfg gitleaks.Config, err error) {
	defer func() {
		// gitleaks compiles the file's regular expressions with MustCompile.
		if p := recover(); p != nil {
			cfg, err = gitleaks.Config{}, fmt.Errorf("translate %s: %v", GitleaksConfigFile, p)
		}
	}()
	if len(data) > MaxGitleaksConfigBytes {
		return gitleaks.Config{}, fmt.Errorf("%s is larger than %d KiB", GitleaksConfigFile, MaxGitleaksConfigBytes>>10)
	}
	v := viper.New()
	v.SetConfigType("toml")
	if err := v.ReadConfig(strings.NewReader(string(data))); err != nil {
		return gitleaks.Config{}, fmt.Errorf("read %s: %w", GitleaksConfigFile, err)
	}
	var vc gitleaks.ViperConfig
	if err := v.Unmarshal(&vc); err != nil {
		return gitleaks.Config{}, fmt.Errorf("decode %s: %w", GitleaksConfigFile, err)
	}
	ext := vc.Extend
	vc.Extend = gitleaks.Extend{}
	if ext.Path != "" || ext.URL != "" {
		return gitleaks.Config{}, fmt.Errorf("%s: [extend] path and url are not followed (only useDefault)", GitleaksConfigFile)
	}
	if err := boundStopWords(&vc); err != nil {
		return gitleaks.Config{}, err
	}
	amending := placeholderRules(&vc, ext.UseDefault, def)
	targeted, err := takeTargeted(&vc)
	if err != nil {
		return gitleaks.Config{}, err
	}
	words := takeStopWords(&vc)
	cfg, err = vc.Translate()
	if err != nil {
		return gitleaks.Config{}, fmt.Errorf("translate %s: %w", GitleaksConfigFile, err)
	}
	putStopWords(cfg, words)
	for _, id := range amending {
		r := cfg.Rules[id]
		r.Regex = nil
		cfg.Rules[id] = r
	}
	if ext.UseDefault {
		extendConfig(&cfg, def, defLists, ext.DisabledRules)
	}
	if len(cfg.Rules) == 0 {
		return gitleaks.Config{}, errNoRules
	}
	return cfg, attachTargeted(cfg, targeted)
}

// boundStopWords refuses a configuration whose stop words are too many.
func boundStopWords(vc *gitleaks.ViperConfig) error {
	n := 0
	count := func(ws []string) {
		for _, w := range ws {
			n += len(w)
		}
	}
	for _, r := range vc.Rules {
		for _, a := range append(slices.Clip(r.Allowlists), r.AllowList) {
			if a != nil {
				count(a.StopWords)
			}
		}
	}
	for _, a := range vc.Allowlists {
		count(a.StopWords)
	}
	if vc.AllowList != nil { //nolint:staticcheck // repositories still write the older [allowlist], which gitleaks v8 reads
		count(vc.AllowList.StopWords) //nolint:staticcheck // as above
	}
	if n > maxStopWordBytes {
		return fmt.Errorf("%s: its stop words take more than %d KiB", GitleaksConfigFile, maxStopWordBytes>>10)
	}
	return nil
}

// placeholderRules gives a rule that amends a default rule (same id, no
// regex or path of its own) a placeholder regex, and returns their ids.
func placeholderRules(vc *gitleaks.ViperConfig, useDefault bool, def gitleaks.Config) []string {
	if !useDefault {
		return nil
	}
	var ids []string
	for i := range vc.Rules {
		r := &vc.Rules[i]
		if _, ok := def.Rules[r.ID]; ok && r.Regex == "" && r.Path == "" {
			r.Regex = placeholderRegex
			ids = append(ids, r.ID)
		}
	}
	return ids
}

// targetedList is a global allowlist that names its rules (targetRules),
// translated alone.
type targetedList struct {
	rules []string
	list  *gitleaks.Allowlist
}

// takeTargeted takes the allowlists that target rules out of vc and
// translates them: gitleaks attaches them before extending, so one that
// targets a default rule would be refused.
func takeTargeted(vc *gitleaks.ViperConfig) ([]targetedList, error) {
	var out []targetedList
	kept := slices.Clone(vc.Allowlists)[:0]
	for i, a := range vc.Allowlists {
		if len(a.TargetRules) == 0 {
			kept = append(kept, a)
			continue
		}
		rules := a.TargetRules
		a.TargetRules = nil
		one := gitleaks.ViperConfig{Allowlists: vc.Allowlists[i : i+1 : i+1]}
		c, err := one.Translate()
		if err != nil {
			return nil, fmt.Errorf("translate %s: [[allowlists]] %w", GitleaksConfigFile, err)
		}
		out = append(out, targetedList{rules: rules, list: c.Allowlists[0]})
	}
	vc.Allowlists = kept
	return out, nil
}

// attachTargeted adds each targeted allowlist to the rules it names.
func attachTargeted(cfg gitleaks.Config, targeted []targetedList) error {
	for _, t := range targeted {
		for _, id := range t.rules {
			r, ok := cfg.Rules[id]
			if !ok {
				return fmt.Errorf("%s: [[allowlists]] target rule ID %q does not exist", GitleaksConfigFile, id)
			}
			r.Allowlists = append(slices.Clip(r.Allowlists), t.list)
			cfg.Rules[id] = r
		}
	}
	return nil
}

// extendConfig merges the default configuration def into cfg as
// gitleaks' Config.extend does (which is not exported): a rule of def
// cfg does not have is added unless disabled; one it has is def's rule
// with cfg's description, entropy, secret group, regex and path where cfg
// sets them, and both rules' tags, keywords and allowlists; lists, def's
// global allowlists as MergeGuard applies them (pathless), follow cfg's.
// Nothing of def is modified.
func extendConfig(cfg *gitleaks.Config, def gitleaks.Config, lists []*gitleaks.Allowlist, disabled []string) {
	for id, base := range def.Rules {
		if slices.Contains(disabled, id) {
			continue
		}
		cur, ok := cfg.Rules[id]
		if !ok {
			cfg.Rules[id] = base
			for _, k := range base.Keywords {
				cfg.Keywords[k] = struct{}{}
			}
			cfg.OrderedRules = append(cfg.OrderedRules, id)
			continue
		}
		if cur.Description != "" {
			base.Description = cur.Description
		}
		if cur.Entropy != 0 {
			base.Entropy = cur.Entropy
		}
		if cur.SecretGroup != 0 {
			base.SecretGroup = cur.SecretGroup
		}
		if cur.Regex != nil {
			base.Regex = cur.Regex
		}
		if cur.Path != nil {
			base.Path = cur.Path
		}
		base.Tags = append(slices.Clip(base.Tags), cur.Tags...)
		base.Keywords = append(slices.Clip(base.Keywords), cur.Keywords...)
		base.Allowlists = append(slices.Clip(base.Allowlists), cur.Allowlists...)
		for _, k := range base.Keywords {
			cfg.Keywords[k] = struct{}{}
		}
		cfg.Rules[id] = base
	}
	cfg.Allowlists = append(slices.Clip(cfg.Allowlists), lists...)
	sort.Strings(cfg.OrderedRules)
}

// errNoRules is a configuration without a rule: gitleaks would find
// nothing, which a review does not take from a repository.
var errNoRules = errors.New(GitleaksConfigFile + " has no rule (add [extend] useDefault = true to keep gitleaks' default rules)")

// gitleaksIgnore parses a .gitleaksignore as gitleaks' AddGitleaksIgnore
// does (which reads only a file on disk): one fingerprint a line,
// `file:rule-id:line` or `commit:file:rule-id:line`, backslashes in the
// path made slashes, blank lines and # comments skipped. Anything else is
// kept as is and matches nothing.
func gitleaksIgnore(data []byte) map[string]struct{} {
	out := map[string]struct{}{}
	if len(data) > MaxGitleaksIgnoreBytes {
		data = data[:MaxGitleaksIgnoreBytes]
	}
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	sc.Buffer(nil, MaxGitleaksIgnoreBytes)
	slash := strings.NewReplacer(`\`, "/")
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		s := strings.Split(line, ":")
		switch len(s) {
		case 3:
			s[0] = slash.Replace(s[0])
		case 4:
			s[1] = slash.Replace(s[1])
		}
		out[strings.Join(s, ":")] = struct{}{}
	}
	return out
}
