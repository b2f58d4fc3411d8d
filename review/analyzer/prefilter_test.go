package analyzer

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/report"

	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/review/diff/difftest"
)

// hitKey is what the fast path must agree with gitleaks on.
type hitKey struct {
	Rule       string
	Start, End int
	Secret     string
}

func hitKeys(hits []report.Finding) []hitKey {
	out := make([]hitKey, 0, len(hits))
	for _, h := range hits {
		out = append(out, hitKey{h.RuleID, h.StartLine, h.EndLine, h.Secret})
	}
	slices.SortFunc(out, func(a, b hitKey) int {
		return strings.Compare(fmt.Sprint(a), fmt.Sprint(b))
	})
	return out
}

// fastPathTexts are added texts where a generic match spans lines, sits
// next to another rule's finding, or must not be made up by blanking.
var fastPathTexts = []string{
	"api_key =\n    \"Zx8Yw7Vu6Ts5Rq4Po3Nm\"\n",
	"api_key =\n\n \"Zx8Yw7Vu6Ts5Rq4Po3Nm\"\nb()\n",
	"client_secret: \"Qm9vYmFyYmF6cXV4MTIzNDU2\"\nAccessToken = 'zT5vR8nK2pL9wX4cB7mQ1sD6'\n",
	"x = 1\nconfig.credentials = `aB3dE5fG7hJ9kL1mN3pQ5rS7`\ny = 2\n",
	"secret:\n\n\n  AbCdEfGhIjKlMn0123xyz\nother()\n",
	"token = foo()\nbar()\nsomeLongIdentifier12345\n",
	"password\n=\nq1w2e3r4t5y6u7i8o9p0\n",
	"auth:\nfoo(x)\n\n\n  Zx8Yw7Vu6Ts5Rq4Po3Nm\n",
	"aws_secret_key = \"AKIAZ7VRSQ5TJN2XMY4W\"\n",
	"nothing to see here\njust code()\n",
	"\u212aEY = \"Zx9Qp2Lm7Vb4Nc8Rt1Yw6Hs3Kd5Fg0Aj\"\n", // a Kelvin sign: the exact path
	"x := 1\n" + strings.Repeat("filler line\n", 20) + "const githubToken = \"ghp_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ\"\napi_key = 'Zx9Qp2Lm7Vb4Nc8Rt1Yw6Hs3Kd5Fg0Aj'\n",
}

// TestFastPathMatchesGitleaks: the prefiltered scan finds what gitleaks'
// detector finds on the whole text, on hand-made texts and on every file
// of a synthetic diff.
func TestFastPathMatchesGitleaks(t *testing.T) {
	det, err := newDetectors()
	if err != nil {
		t.Fatal(err)
	}
	if det.generic == nil {
		t.Fatal("the generic rule is not the one the fast path is written for: update genericRegex and genericCandidate")
	}
	cfg, err := defaultConfig()
	if err != nil {
		t.Fatal(err)
	}
	oracle := detect.NewDetector(cfg) // every rule, as gitleaks runs them
	texts := slices.Clone(fastPathTexts)
	text, _ := difftest.Large(1 << 20)
	d, err := diff.ParseString(text)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range d.Files {
		var b strings.Builder
		for _, l := range addedLines(nil, f) {
			b.WriteString(l.Text + "\n")
		}
		texts = append(texts, b.String())
	}
	found, generic := 0, 0
	for i, text := range texts {
		want := hitKeys(oracle.DetectString(text))
		found += len(want)
		for _, h := range want {
			if h.Rule == genericRuleID {
				generic++
			}
		}
		if diff := cmp.Diff(want, hitKeys(det.detect(text, where{}))); diff != "" {
			t.Errorf("text %d (-gitleaks +fast path):\n%s\n%s", i, diff, text)
		}
	}
	if found < 12 || generic < 5 {
		t.Errorf("gitleaks found %d secrets in all the texts, %d generic: the test compares too little", found, generic)
	}
}

// TestGenericText: the generic rule sees a candidate line, the bridge lines
// after it and the value's line; every other line is blanked.
func TestGenericText(t *testing.T) {
	text := "a()\napi_key =\n\n \"Zx8Yw7Vu6Ts5Rq4Po3Nm\"\nb()\nc()\n"
	got, ok := genericText(text, []int{strings.Index(text, "key")})
	want := "\x00\napi_key =\n\n \"Zx8Yw7Vu6Ts5Rq4Po3Nm\"\n\x00\n\x00\n"
	if !ok || got != want {
		t.Errorf("genericText = %q, %v; want %q", got, ok, want)
	}
	if _, ok := genericText("token := f()\n", []int{0}); ok {
		t.Error("a call assigned to a token is a candidate")
	}
}
