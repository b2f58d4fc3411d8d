package analyzer

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/review"
)

// keyBody is a PEM body line of the shape of an OpenSSH key (its fixed
// prefix: no key).
const keyBody = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW"

// awsKey is a live-shaped AWS access key id that gitleaks' exact aws rule
// matches.
const awsKey = "AKIAQYLPMN5HHHFPZAM2"

func TestIsTestFixture(t *testing.T) {
	tests := map[string]bool{
		"testdata/key.pem":                  true,
		"pkg/x/testdata/creds.json":         true,
		"fixtures/aws.txt":                  true,
		"test/fixtures/keys/id_rsa":         true,
		"spec/fixtures/token.yml":           true,
		"src/__fixtures__/secrets.json":     true,
		"web/__mocks__/api.js":              true,
		"detect/detect_test.go":             true,
		"tests/test_keys.py":                true,
		"tests/keys_test.py":                true,
		"src/app.spec.ts":                   true,
		"src/app.test.js":                   true,
		"src/App.Test.JS":                   true,
		"main.go":                           false,
		"config/prod.yml":                   false,
		"test.py":                           false,
		"testing/keys.go":                   false,
		"latest_data/x.json":                false,
		"src/contest_fixtures_loader.go":    false,
		"mytestdata/key.pem":                false,
		"_test.go":                          false,
		"scripts/test_env.sh":               false,
		"cmd/generate/config/rules/aws.go":  false,
		"docs/fixtures.md":                  false,
		"pkg/fixturesx/key.txt":             false,
		"./testdata/../src/key.pem":         false,
		"a/b/testdata":                      false,
		"TestData/Key.pem":                  true,
		"app/src/test/java/KeysTest.java":   true,
		"packages/web/src/api.spec.tsx":     true,
		"python/tests/fixtures/secrets.env": true,
		"test/git-secrets.bats":             true,
	}
	for p, want := range tests {
		if got := IsTestFixture(p); got != want {
			t.Errorf("IsTestFixture(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestHasKeyMaterial(t *testing.T) {
	tests := map[string]struct {
		lines []string
		want  bool
	}{
		"header alone":       {[]string{"-----BEGIN OPENSSH PRIVATE KEY-----"}, false},
		"header in a string": {[]string{`const h = "-----BEGIN RSA PRIVATE KEY-----"`}, false},
		"body":               {[]string{"-----BEGIN RSA PRIVATE KEY-----", keyBody}, true},
		"encrypted body": {[]string{"-----BEGIN RSA PRIVATE KEY-----", "Proc-Type: 4,ENCRYPTED",
			"DEK-Info: AES-128-CBC,0123", "", keyBody}, true},
		"escaped in one line": {[]string{`key = "-----BEGIN PRIVATE KEY-----\n` + keyBody + `\n-----END PRIVATE KEY-----"`}, true},
		"placeholder":         {[]string{"-----BEGIN PRIVATE KEY-----", "...", "-----END PRIVATE KEY-----"}, false},
		"run of x":            {[]string{"-----BEGIN PRIVATE KEY-----", strings.Repeat("X", 64)}, false},
		"short line":          {[]string{"-----BEGIN PRIVATE KEY-----", "MIIEvQIBADANBg"}, false},
		"no header":           {[]string{keyBody}, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := hasKeyMaterial(tc.lines); got != tc.want {
				t.Errorf("hasKeyMaterial = %v, want %v", got, tc.want)
			}
		})
	}
}

// repoHit is what a test of ForRepo compares of a finding.
type repoHit struct {
	Path     string
	Title    string
	Severity review.Severity
	Exact    bool
}

// scanRepo runs the built-in secret detectors configured for repo over
// the diff text and returns their findings and the notes.
func scanRepo(t *testing.T, repo SecretsRepo, text string) ([]repoHit, []string) {
	t.Helper()
	analyzers, notes := ForRepo([]Analyzer{NewSecrets(), PrivateKeys{}}, repo)
	var out []repoHit
	for _, r := range Run(t.Context(), analyzers, parse(t, text)) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		for _, f := range r.Findings {
			if strings.Contains(f.Title+f.Description+f.CodeSnippet+f.Suggestion, awsKey) || strings.Contains(f.CodeSnippet, keyBody) {
				t.Errorf("finding %q repeats the secret", f.Title)
			}
			out = append(out, repoHit{f.FilePath, f.Title, f.Severity, Exact(f)})
		}
	}
	return out, notes
}

func TestForRepo(t *testing.T) {
	aws := `aws_key = "` + awsKey + `"`
	bare := "owner " + awsKey // no generic match beside it
	awsHit := func(p string) repoHit {
		return repoHit{p, "Possible secret committed (aws-access-token)", review.SeverityCritical, true}
	}
	fixtureHit := func(p string) repoHit {
		return repoHit{p, "Possible secret committed (aws-access-token)", review.SeverityWarning, false}
	}
	tests := map[string]struct {
		repo      SecretsRepo
		diff      string
		want      []repoHit
		wantNotes int
	}{
		"defaults block": {SecretsRepo{}, added("app/config.py", aws), []repoHit{awsHit("app/config.py")}, 0},
		"fixture path warns": {SecretsRepo{}, added("pkg/testdata/config.py", aws),
			[]repoHit{fixtureHit("pkg/testdata/config.py")}, 0},
		"fixture path blocks when asked": {SecretsRepo{BlockInTests: true}, added("pkg/testdata/config.py", aws),
			[]repoHit{awsHit("pkg/testdata/config.py")}, 0},
		"fixture private key warns": {SecretsRepo{}, added("x_test.go", "-----BEGIN RSA PRIVATE KEY-----", keyBody),
			[]repoHit{{"x_test.go", "Private key committed", review.SeverityWarning, false}}, 0},
		"global fingerprint": {SecretsRepo{Ignore: []byte("# known\napp/config.py:aws-access-token:1\n")},
			added("app/config.py", aws), nil, 0},
		"commit fingerprint": {SecretsRepo{Commit: "abc123", Ignore: []byte("abc123:app/config.py:aws-access-token:1\n")},
			added("app/config.py", aws), nil, 0},
		"commit fingerprint of another commit": {SecretsRepo{Commit: "def456", Ignore: []byte("abc123:app/config.py:aws-access-token:1\n")},
			added("app/config.py", aws), []repoHit{awsHit("app/config.py")}, 0},
		"fingerprint of another line": {SecretsRepo{Ignore: []byte("app/config.py:aws-access-token:2\n")},
			added("app/config.py", aws), []repoHit{awsHit("app/config.py")}, 0},
		"allowlisted path": {SecretsRepo{Gitleaks: []byte("[extend]\nuseDefault = true\n[allowlist]\npaths = ['''^samples/''']\n")},
			added("samples/config.py", aws), nil, 0},
		"allowlisted path, other file": {SecretsRepo{Gitleaks: []byte("[extend]\nuseDefault = true\n[allowlist]\npaths = ['''^samples/''']\n")},
			added("app/config.py", aws), []repoHit{awsHit("app/config.py")}, 0},
		"allowlisted path skips the key check": {SecretsRepo{Gitleaks: []byte("[extend]\nuseDefault = true\n[[allowlists]]\npaths = ['''^keys/''']\n")},
			added("keys/k.pem", "-----BEGIN RSA PRIVATE KEY-----", keyBody, "-----END RSA PRIVATE KEY-----"), nil, 0},
		"default path allowlist does not apply": {SecretsRepo{Gitleaks: []byte("[extend]\nuseDefault = true\n")},
			added("deep/go.sum", bare), []repoHit{awsHit("deep/go.sum")}, 0},
		"default regex allowlist applies": {SecretsRepo{Gitleaks: []byte("[extend]\nuseDefault = true\n")},
			added("app/config.py", "owner AKIAIOSFODNN7EXAMPLE"), nil, 0},
		"allowlisted regex": {SecretsRepo{Gitleaks: []byte("[extend]\nuseDefault = true\n[[allowlists]]\nregexes = ['''^AKIAQYLP''']\n")},
			added("app/config.py", aws), nil, 0},
		"allowlisted line": {SecretsRepo{Gitleaks: []byte("[extend]\nuseDefault = true\n[[allowlists]]\nregexTarget = \"line\"\nregexes = ['''aws_key''']\n")},
			added("app/config.py", aws), nil, 0},
		"stop word": {SecretsRepo{Gitleaks: []byte("[extend]\nuseDefault = true\n[[allowlists]]\nstopwords = [\"hhhfp\"]\n")},
			added("app/config.py", aws), nil, 0},
		"allowlisted commit": {SecretsRepo{Commit: "abc123", Gitleaks: []byte("[extend]\nuseDefault = true\n[[allowlists]]\ncommits = [\"abc123\"]\n")},
			added("app/config.py", aws), nil, 0},
		"targeted allowlist on a default rule": {SecretsRepo{Gitleaks: []byte("[extend]\nuseDefault = true\n[[allowlists]]\ntargetRules = [\"aws-access-token\"]\nregexes = ['''AKIA''']\n")},
			added("app/config.py", bare), nil, 0},
		"rule amending a default rule": {SecretsRepo{Gitleaks: []byte("[extend]\nuseDefault = true\n[[rules]]\nid = \"aws-access-token\"\n[[rules.allowlists]]\nregexes = ['''AKIA''']\n")},
			added("app/config.py", bare), nil, 0},
		"disabled rule": {SecretsRepo{Gitleaks: []byte("[extend]\nuseDefault = true\ndisabledRules = [\"aws-access-token\"]\n")},
			added("app/config.py", bare), nil, 0},
		"own rule without the defaults": {SecretsRepo{Gitleaks: []byte("[[rules]]\nid = \"acme\"\ndescription = \"Acme key\"\nregex = '''acme_[a-z0-9]{16}'''\nkeywords = [\"acme_\"]\n")},
			added("app/config.py", aws, "k = acme_0123456789abcdef"), []repoHit{{"app/config.py", "Possible secret committed (acme)", review.SeverityCritical, true}}, 0},
		"bad regex is a note": {SecretsRepo{Gitleaks: []byte("[extend]\nuseDefault = true\n[[allowlists]]\nregexes = ['''(''']\n")},
			added("app/config.py", aws), []repoHit{awsHit("app/config.py")}, 1},
		"bad toml is a note": {SecretsRepo{Gitleaks: []byte("[extend\n")},
			added("app/config.py", aws), []repoHit{awsHit("app/config.py")}, 1},
		"extend path is a note": {SecretsRepo{Gitleaks: []byte("[extend]\npath = \"/etc/passwd\"\n")},
			added("app/config.py", aws), []repoHit{awsHit("app/config.py")}, 1},
		"no rule is a note": {SecretsRepo{Gitleaks: []byte("title = \"x\"\n")},
			added("app/config.py", aws), []repoHit{awsHit("app/config.py")}, 1},
		"too large is a note": {SecretsRepo{Gitleaks: []byte("# " + strings.Repeat("x", MaxGitleaksConfigBytes))},
			added("app/config.py", aws), []repoHit{awsHit("app/config.py")}, 1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, notes := scanRepo(t, tc.repo, tc.diff)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
			if len(notes) != tc.wantNotes {
				t.Errorf("notes = %q, want %d", notes, tc.wantNotes)
			}
		})
	}
}

// TestForRepoConcurrent: reviews of repositories with their own
// configurations run at once over the one default rule set, which none of
// them changes (run with -race).
func TestForRepoConcurrent(t *testing.T) {
	base := []Analyzer{NewSecrets(), PrivateKeys{}}
	configs := []string{
		"[extend]\nuseDefault = true\n[[rules]]\nid = \"aws-access-token\"\n[[rules.allowlists]]\nregexes = ['''AKIA''']\n",
		"[extend]\nuseDefault = true\n[[allowlists]]\ntargetRules = [\"aws-access-token\"]\npaths = ['''^app/''']\n",
		"",
	}
	text := added("app/config.py", "owner "+awsKey)
	want := []int{0, 0, 1}
	for range 4 {
		for i, c := range configs {
			t.Run("", func(t *testing.T) {
				t.Parallel()
				repo := SecretsRepo{}
				if c != "" {
					repo.Gitleaks = []byte(c)
				}
				analyzers, notes := ForRepo(base, repo)
				n := 0
				for _, r := range Run(t.Context(), analyzers, parse(t, text)) {
					n += len(r.Findings)
				}
				if n != want[i] || len(notes) != 0 {
					t.Errorf("config %d: %d findings (want %d), notes %q", i, n, want[i], notes)
				}
			})
		}
	}
}
