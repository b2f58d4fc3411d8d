package analyzer

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/viper"
	gitleaks "github.com/zricethezav/gitleaks/v8/config"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/diff"
)

func parse(t *testing.T, text string) []*diff.File {
	t.Helper()
	d, err := diff.ParseString(text)
	if err != nil {
		t.Fatal(err)
	}
	return d.Files
}

func readDiff(t *testing.T, name string) []*diff.File {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return parse(t, string(b))
}

// anchor is what the tests compare of a finding.
type anchor struct {
	Agent     string
	Path      string
	Start     int
	End       int
	Severity  review.Severity
	Category  review.Category
	RuleTitle string
}

func anchors(fs []review.Finding) []anchor {
	var out []anchor
	for _, f := range fs {
		out = append(out, anchor{f.Agent, f.FilePath, f.LineStart, f.LineEnd, f.Severity, f.Category, f.Title})
	}
	return out
}

func TestBuiltinOnPlantedDiff(t *testing.T) {
	files := readDiff(t, "../pipeline/testdata/planted.diff")
	want := map[string][]anchor{
		"analyzer:secrets": {
			{"analyzer:secrets", "config/aws.go", 5, 5, review.SeverityCritical, review.CategorySecurity, "Possible secret committed (aws-access-token)"},
			{"analyzer:secrets", "deploy/id_rsa", 1, 4, review.SeverityCritical, review.CategorySecurity, "Possible secret committed (private-key)"},
		},
		"analyzer:private-keys": {
			{"analyzer:private-keys", "deploy/id_rsa", 1, 1, review.SeverityCritical, review.CategorySecurity, "Private key committed"},
		},
		"analyzer:conflict-markers": {
			{"analyzer:conflict-markers", "main.go", 6, 10, review.SeverityCritical, review.CategoryBug, "Unresolved merge conflict"},
		},
		"analyzer:debug-statements": nil,
		"analyzer:focused-tests":    nil,
		"analyzer:env-files":        nil,
	}
	for _, a := range Builtin() {
		t.Run(a.Name(), func(t *testing.T) {
			got, err := a.Analyze(t.Context(), files)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range got {
				// Never echo a secret.
				for _, s := range []string{"AKIAZ7VRSQ5TJN2XMY4W", "MIIEpAIBAAKCAQEA"} {
					if strings.Contains(f.Title+f.Description+f.Suggestion+f.CodeSnippet, s) {
						t.Errorf("finding %q repeats the secret", f.Title)
					}
				}
			}
			wantA, ok := want[a.Name()]
			if !ok {
				t.Fatalf("no expectation for %s", a.Name())
			}
			if diff := cmp.Diff(wantA, anchors(got)); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}

// added builds a diff adding lines to a new file at path.
func added(path string, lines ...string) string {
	var b strings.Builder
	b.WriteString("diff --git a/" + path + " b/" + path + "\nnew file mode 100644\n--- /dev/null\n+++ b/" + path + "\n")
	b.WriteString("@@ -0,0 +1," + strconv.Itoa(len(lines)) + " @@\n")
	for _, l := range lines {
		b.WriteString("+" + l + "\n")
	}
	return b.String()
}

func TestChecks(t *testing.T) {
	tests := map[string]struct {
		a     Analyzer
		diff  string
		lines [][2]int // start, end of each finding
	}{
		"debugger in js":          {DebugStatements{}, added("web/app.js", "const a = 1;", "  debugger;", "run();"), [][2]int{{2, 2}}},
		"debugger word in string": {DebugStatements{}, added("web/app.js", `log("debugger;")`), nil},
		"debugger in go ignored":  {DebugStatements{}, added("main.go", "debugger;"), nil},
		"pry in ruby":             {DebugStatements{}, added("app.rb", "def x", "  binding.pry", "end"), [][2]int{{2, 2}}},
		"python breakpoint":       {DebugStatements{}, added("x.py", "def f():", "    breakpoint()", "    import pdb; pdb.set_trace()"), [][2]int{{2, 2}, {3, 3}}},
		"it.only in test":         {FocusedTests{}, added("src/a.test.ts", "describe('x', () => {", "  it.only('y', () => {})", "})"), [][2]int{{2, 2}}},
		"fdescribe in spec":       {FocusedTests{}, added("src/a.spec.js", "fdescribe('x', () => {})"), [][2]int{{1, 1}}},
		"only outside tests":      {FocusedTests{}, added("src/a.ts", "it.only('y')"), nil},
		"dotenv":                  {EnvFiles{}, added(".env", "DB_PASSWORD=hunter2"), [][2]int{{1, 1}}},
		"dotenv local":            {EnvFiles{}, added("app/.env.local", "X=1"), [][2]int{{1, 1}}},
		"dotenv example":          {EnvFiles{}, added(".env.example", "DB_PASSWORD="), nil},
		"rst underline":           {ConflictMarkers{}, added("doc.rst", "Title", "======="), nil},
		"orphan closing marker":   {ConflictMarkers{}, added("a.txt", "x", ">>>>>>> main"), [][2]int{{2, 2}}},
		"marker needs a space":    {ConflictMarkers{}, added("a.txt", "<<<<<<<<<< not a marker"), nil},
		"openssh key header":      {PrivateKeys{}, added("k", "-----BEGIN OPENSSH PRIVATE KEY-----"), [][2]int{{1, 1}}},
		"public key":              {PrivateKeys{}, added("k.pub", "-----BEGIN PUBLIC KEY-----"), nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := tc.a.Analyze(t.Context(), parse(t, tc.diff))
			if err != nil {
				t.Fatal(err)
			}
			var lines [][2]int
			for _, f := range got {
				lines = append(lines, [2]int{f.LineStart, f.LineEnd})
				if f.Side != review.SideRight || f.Agent != tc.a.Name() {
					t.Errorf("finding %+v", f)
				}
			}
			if diff := cmp.Diff(tc.lines, lines); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSecretsOnlyAddedLines(t *testing.T) {
	// The key is on a deleted line and a context line: nothing is added.
	text := "diff --git a/c.go b/c.go\n--- a/c.go\n+++ b/c.go\n@@ -1,3 +1,3 @@\n const a = \"AKIAZ7VRSQ5TJN2XMY4W\"\n-const b = \"AKIAZ7VRSQ5TJN2XMY5Q\"\n+const b = 2\n const c = 3\n"
	got, err := testSecrets.Analyze(t.Context(), parse(t, text))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Errorf("findings on unchanged lines: %+v", got)
	}
}

// TestExactness: only a rule that matches a credential's own format is an
// exact detector; gitleaks' generic and keyword-proximity rules, and the
// .env convention, are heuristics, whose findings the verifier never marks
// verified.
func TestExactness(t *testing.T) {
	type hit struct {
		Title    string
		Severity review.Severity
		Exact    bool
	}
	tests := map[string]struct {
		a    Analyzer
		diff string
		want []hit
	}{
		"aws key id": {testSecrets, added("cfg.py", `AWS_KEY = "AKIAZ7VRSQ5TJN2XMY4W"`),
			[]hit{{"Possible secret committed (aws-access-token)", review.SeverityCritical, true}}},
		"generic api key": {testSecrets, added("cfg.py", `api_key = "Zx9Qp2Lm7Vb4Nc8Rt1Yw6Hs3Kd5Fg0Aj"`),
			[]hit{{"Possible secret committed (generic-api-key)", review.SeverityWarning, false}}},
		"keyword rule": {testSecrets, added("cfg.py", `datadog_token = "a8f3c9d2e1b7f4a6c0d9e8b2a7f1c3d5e9b4a0c8"`),
			[]hit{{"Possible secret committed (datadog-access-token)", review.SeverityCritical, false}}},
		"constant rule": {testSecrets, added("README.md", "short-lived keys start bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t"),
			[]hit{{"Possible secret committed (aws-amazon-bedrock-api-key-short-lived)", review.SeverityCritical, false}}},
		"private key header alone": {PrivateKeys{}, added("k", "-----BEGIN OPENSSH PRIVATE KEY-----"),
			[]hit{{"Private key header without key material", review.SeverityInfo, false}}},
		"private key with material": {PrivateKeys{}, added("k", "-----BEGIN OPENSSH PRIVATE KEY-----", keyBody),
			[]hit{{"Private key committed", review.SeverityCritical, true}}},
		"conflict marker": {ConflictMarkers{}, added("a.txt", ">>>>>>> main"),
			[]hit{{"Unresolved merge conflict", review.SeverityCritical, true}}},
		"dotenv": {EnvFiles{}, added(".env", "X=1"),
			[]hit{{"Environment file committed", review.SeverityWarning, false}}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := tc.a.Analyze(t.Context(), parse(t, tc.diff))
			if err != nil {
				t.Fatal(err)
			}
			var hits []hit
			for _, f := range got {
				hits = append(hits, hit{f.Title, f.Severity, Exact(f)})
			}
			if diff := cmp.Diff(tc.want, hits); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if Exact(review.Finding{Agent: "reviewer:1", Confidence: 1}) {
		t.Error("a model's finding is exact")
	}
}

// TestSecretsInLongLines: a long line is scanned in overlapping windows; a
// key at any offset, across a window's edge included, is found once, on its
// line.
func TestSecretsInLongLines(t *testing.T) {
	const key = "AKIAZ7VRSQ5TJN2XMY4W"
	filler := strings.Repeat("q", 3*longLine)
	for _, at := range []int{0, longLine - windowOverlap - len(key)/2, longLine - len(key)/2, 2*longLine + 100, len(filler)} {
		line := `x="` + filler[:at] + `",k="` + key + `",y="` + filler[at:] + `"`
		d, err := diff.ParseString(added("dist/app.js", "// header", line))
		if err != nil {
			t.Fatal(err)
		}
		got, err := testSecrets.Analyze(t.Context(), d.Files)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].LineStart != 2 || !strings.Contains(got[0].Title, "aws-access-token") {
			t.Errorf("key at offset %d: findings %+v, want one aws-access-token on line 2", at, got)
		}
	}
}

// TestSecretsStopWords: gitleaks' stop words still allow a generic
// finding whose secret holds one (upper case included), now that they are
// compared one by one instead of through gitleaks' trie.
func TestSecretsStopWords(t *testing.T) {
	tests := map[string]struct {
		line string
		want int
	}{
		"no stop word":    {`api_key = "Zx9Qp2Lm7Vb4Nc8Rt1Yw6Hs3Kd5Fg0Aj"`, 1},
		"stop word":       {`api_key = "Zx9Qp2Lm7Vb4academyRt1Yw6Hs3Kd5"`, 0},
		"upper stop word": {`api_key = "Zx9Qp2Lm7Vb4ACADEMYRt1Yw6Hs3Kd5"`, 0},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := testSecrets.Analyze(t.Context(), parse(t, added("cfg.py", tc.line)))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tc.want {
				t.Errorf("%d findings, want %d: %+v", len(got), tc.want, got)
			}
		})
	}
}

// TestDefaultConfigStopWords: the rules keep the stop words of gitleaks'
// own translation of its configuration.
func TestDefaultConfigStopWords(t *testing.T) {
	v := viper.New()
	v.SetConfigType("toml")
	if err := v.ReadConfig(strings.NewReader(gitleaks.DefaultConfig)); err != nil {
		t.Fatal(err)
	}
	var vc gitleaks.ViperConfig
	if err := v.Unmarshal(&vc); err != nil {
		t.Fatal(err)
	}
	want, err := vc.Translate()
	if err != nil {
		t.Fatal(err)
	}
	got, err := defaultConfig()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for id, r := range want.Rules {
		if len(got.Rules[id].Allowlists) != len(r.Allowlists) {
			t.Fatalf("rule %s: %d allowlists, want %d", id, len(got.Rules[id].Allowlists), len(r.Allowlists))
		}
		for i, a := range r.Allowlists {
			n += len(a.StopWords)
			w, g := slices.Sorted(slices.Values(a.StopWords)), slices.Sorted(slices.Values(got.Rules[id].Allowlists[i].StopWords))
			if diff := cmp.Diff(w, g); diff != "" {
				t.Errorf("rule %s, allowlist %d: stop words (-gitleaks +ours):\n%s", id, i, diff)
			}
		}
	}
	if n < 1000 {
		t.Errorf("%d stop words in gitleaks' rules: the test compares nothing", n)
	}
}

// testSecrets is the secret scan the tests share, as a process shares it:
// each Secrets compiles gitleaks' rules on first use (a quarter of a
// second).
var testSecrets = NewSecrets()
