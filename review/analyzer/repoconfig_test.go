package analyzer

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRepoSecrets: a repository's .gitleaks.toml allowlists and
// .gitleaksignore fingerprints keep the secret scan from reporting what
// gitleaks itself would not, and nothing else.
func TestRepoSecrets(t *testing.T) {
	const key = `AWS_KEY = "AKIAZ7VRSQ5TJN2XMY4W"`
	const slack = `SLACK = "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"`
	tests := []struct {
		name, toml, ignore string
		path, commit        string
		lines               []string
		want                []string // the rules reported
	}{
		{"no configuration", "", "", "cfg.py", "", []string{key}, []string{"aws-access-token"}},
		{"a path allowlist", "[allowlist]\npaths = ['''^testdata/''']\n", "", "testdata/cfg.py", "", []string{key}, nil},
		{"a path allowlist elsewhere", "[allowlist]\npaths = ['''^testdata/''']\n", "", "cfg.py", "", []string{key}, []string{"aws-access-token"}},
		{"a regex on the secret", "[[allowlists]]\nregexes = ['''AKIAZ7VRSQ5TJN2XMY4W''']\n", "", "cfg.py", "", []string{key, slack}, []string{"slack-bot-token"}},
		{"a regex on the line", "[[allowlists]]\nregexTarget = \"line\"\nregexes = ['''^AWS_KEY''']\n", "", "cfg.py", "", []string{key}, nil},
		{"a stop word", "[[allowlists]]\nstopwords = [\"z7vrsq\"]\n", "", "cfg.py", "", []string{key}, nil},
		{"AND: path and regex both hold", "[[allowlists]]\ncondition = \"AND\"\npaths = ['''^docs/''']\nregexes = ['''AKIA''']\n", "", "docs/a.md", "", []string{key}, nil},
		{"AND: the path does not hold", "[[allowlists]]\ncondition = \"AND\"\npaths = ['''^docs/''']\nregexes = ['''AKIA''']\n", "", "cfg.py", "", []string{key}, []string{"aws-access-token"}},
		{"targeted at the rule", "[[allowlists]]\ntargetRules = [\"aws-access-token\"]\nregexes = ['''.''']\n", "", "cfg.py", "", []string{key, slack}, []string{"slack-bot-token"}},
		{"a commit", "[allowlist]\ncommits = [\"abc123\"]\n", "", "cfg.py", "abc123", []string{key}, nil},
		{"disabled rule", "[extend]\nuseDefault = true\ndisabledRules = [\"aws-access-token\"]\n", "", "cfg.py", "", []string{key, slack}, []string{"slack-bot-token"}},
		{"a .gitleaksignore fingerprint", "", "# fakes\ncfg.py:aws-access-token:1\n", "cfg.py", "", []string{key, slack}, []string{"slack-bot-token"}},
		{"a fingerprint of another line", "", "cfg.py:aws-access-token:7\n", "cfg.py", "", []string{key}, []string{"aws-access-token"}},
		{"a fingerprint with the reviewed commit", "", "abc123:cfg.py:aws-access-token:1\n", "cfg.py", "abc123", []string{key}, nil},
		{"a fingerprint with another commit", "", "def456:cfg.py:aws-access-token:1\n", "cfg.py", "abc123", []string{key}, []string{"aws-access-token"}},
		{"own rules are not run", "[[rules]]\nid = \"mine\"\nregex = '''SECRET_[0-9]+'''\n", "", "cfg.py", "", []string{key, "X = SECRET_123"}, []string{"aws-access-token"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs, err := ParseRepoSecrets([]byte(tt.toml), []byte(tt.ignore))
			if err != nil {
				t.Fatal(err)
			}
			got, err := NewSecrets().WithRepo(rs, tt.commit).Analyze(t.Context(), parse(t, added(tt.path, tt.lines...)))
			if err != nil {
				t.Fatal(err)
			}
			var rules []string
			for _, f := range got {
				rules = append(rules, f.Rule)
			}
			if diff := cmp.Diff(tt.want, rules); diff != "" {
				t.Errorf("rules reported (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseRepoSecretsErrors(t *testing.T) {
	tests := []struct {
		name, toml, want string
	}{
		{"not TOML", "[allowlist\n", ".gitleaks.toml: "},
		{"a bad regex", "[allowlist]\nregexes = ['''(''']\n", ".gitleaks.toml: "},
		{"too large", strings.Repeat("#", MaxGitleaksConfigBytes+1), "larger than 256 KiB"},
	}
	for _, tt := range tests {
		if _, err := ParseRepoSecrets([]byte(tt.toml), nil); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want it to say %q", tt.name, err, tt.want)
		}
	}
	rs, err := ParseRepoSecrets([]byte("[extend]\npath = \"/etc/passwd\"\n[[rules]]\nid = \"x\"\nregex = '''y'''\n"), nil)
	if err != nil || len(rs.Notes) != 2 {
		t.Errorf("extend.path and own rules: %v, notes %q; want two notes", err, rs.Notes)
	}
}
