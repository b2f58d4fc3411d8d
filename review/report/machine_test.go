package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/mergeguard/mergeguard/review"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// machineVerdict has a finding of each kind the machine formats treat
// differently: a fenced code suggestion on head lines, prose, a finding on
// removed lines, one on a whole file, a path that needs escaping, a
// multi-line title and an unknown category; the linters' and analyzers'
// findings with their rules and columns (two shellcheck findings on one
// line, and one repeated, which the line format writes once); and a
// degraded review with notes. The false positive must not appear.
func machineVerdict() review.Verdict {
	return review.Verdict{
		Verdict: review.DecisionRequestChanges, Summary: "Reviewed 3 files.", Degraded: true,
		Notes: []string{"Some agents failed and the review is partial: reviewer-1 (timeout)"},
		Files: []review.FileReview{
			{FilePath: "app/db.go", Findings: []review.Finding{
				{FilePath: "app/db.go", LineStart: 12, LineEnd: 13, Side: review.SideRight, Severity: review.SeverityCritical,
					Category: review.CategorySecurity, Title: "SQL injection", Description: "The query concatenates input.",
					Suggestion:         "```go\nrows, err := db.Query(\"SELECT * FROM u WHERE id = ?\", id)\nif err != nil {\n```",
					VerificationStatus: review.Verified, Confidence: 0.9, Agent: "reviewer-1", Fingerprint: "54bba9a653f85922"},
				{FilePath: "app/db.go", LineStart: 40, LineEnd: 40, Side: review.SideRight, Severity: review.SeverityWarning,
					Category: review.CategoryBug, Title: "Error ignored", Suggestion: "Return the error.",
					VerificationStatus: review.Likely, Confidence: 0.7, Fingerprint: "0a1b2c3d4e5f6071"},
				{FilePath: "app/db.go", LineStart: 7, LineEnd: 8, Side: review.SideLeft, Severity: review.SeverityInfo,
					Category: review.CategoryQuality, Title: "Removed check was useful", Fingerprint: "1111111111111111"},
			}},
			{FilePath: "deploy.sh", Findings: []review.Finding{
				{FilePath: "deploy.sh", LineStart: 4, LineEnd: 4, Side: review.SideRight, Severity: review.SeverityInfo, Category: review.CategoryQuality,
					Title: "SC2086: Double quote to prevent globbing and word splitting", Agent: "analyzer:shellcheck", Rule: "SC2086", Column: 6},
				{FilePath: "deploy.sh", LineStart: 4, LineEnd: 4, Side: review.SideRight, Severity: review.SeverityInfo, Category: review.CategoryQuality,
					Title: "SC2086: Double quote to prevent globbing and word splitting", Agent: "analyzer:shellcheck", Rule: "SC2086", Column: 12},
				{FilePath: "deploy.sh", LineStart: 4, LineEnd: 4, Side: review.SideRight, Severity: review.SeverityInfo, Category: review.CategoryQuality,
					Title: "SC2086: Double quote to prevent globbing and word splitting", Agent: "analyzer:shellcheck", Rule: "SC2086", Column: 12},
				{FilePath: "deploy.sh", LineStart: 9, LineEnd: 9, Side: review.SideRight, Severity: review.SeverityCritical, Category: review.CategorySecurity,
					Title: "Possible secret committed (aws-access-token)", Agent: "analyzer:secrets", Rule: "aws-access-token"},
				{FilePath: "deploy.sh", LineStart: 11, LineEnd: 11, Side: review.SideRight, Severity: review.SeverityCritical, Category: review.CategorySecurity,
					Title: "Private key committed", Agent: "analyzer:private-keys"},
			}},
			{FilePath: "Dockerfile", Findings: []review.Finding{
				{FilePath: "Dockerfile", LineStart: 1, LineEnd: 1, Side: review.SideRight, Severity: review.SeverityWarning, Category: review.CategoryBug,
					Title: "DL3006: Always tag the version of an image explicitly", Agent: "analyzer:dockerfile", Rule: "DL3006"},
				{FilePath: "Dockerfile", LineStart: 3, LineEnd: 3, Side: review.SideRight, Severity: review.SeverityWarning, Category: review.CategoryBug,
					Title: "Usage of undefined variable '$X'", Agent: "analyzer:dockerfile", Rule: "UndefinedVar"},
			}},
			{FilePath: "docs/a b:c#1.md", Findings: []review.Finding{
				{FilePath: "docs/a b:c#1.md", Severity: review.SeverityStyle, Category: "docs",
					Title: "Two\nlines", Description: "Whole file."},
			}},
		},
		FalsePositives: []review.Finding{{FilePath: "x.go", LineStart: 1, LineEnd: 1, Title: "not real", Severity: review.SeverityCritical}},
	}
}

func TestMachineFormatsGolden(t *testing.T) {
	v := machineVerdict()
	tests := map[string]func(*bytes.Buffer) error{
		"machine.sarif":  func(b *bytes.Buffer) error { return SARIF(b, v, "v1.2.3") },
		"machine.rdjson": func(b *bytes.Buffer) error { return RDJSON(b, v) },
		"machine.line":   func(b *bytes.Buffer) error { return Line(b, v) },
	}
	for name, render := range tests {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := render(&b); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), b.String()); diff != "" {
				t.Errorf("%s (-want +got):\n%s", name, diff)
			}
		})
	}
}

// TestMachineFormatsSchemas validates SARIF against the OASIS SARIF 2.1.0
// schema and rdjson against reviewdog's, for the sample verdict and an
// empty one.
func TestMachineFormatsSchemas(t *testing.T) {
	sarif := compileSchema(t, "sarif-schema-2.1.0.json")
	rdjson := compileSchema(t, "rdjson-DiagnosticResult.json")
	for name, v := range map[string]review.Verdict{"sample": machineVerdict(), "empty": {Verdict: review.DecisionApprove}} {
		t.Run(name, func(t *testing.T) {
			var s, r bytes.Buffer
			if err := SARIF(&s, v, ""); err != nil {
				t.Fatal(err)
			}
			if err := RDJSON(&r, v); err != nil {
				t.Fatal(err)
			}
			validate(t, sarif, s.Bytes())
			validate(t, rdjson, r.Bytes())
		})
	}
	// The schemas can fail: a level SARIF does not know is refused.
	bad := strings.Replace(mustSARIF(t), `"level": "error"`, `"level": "critical"`, 1)
	var doc any
	if err := json.Unmarshal([]byte(bad), &doc); err != nil {
		t.Fatal(err)
	}
	if err := sarif.Validate(doc); err == nil {
		t.Error("a SARIF log with level critical validated")
	}
}

func mustSARIF(t *testing.T) string {
	t.Helper()
	var b bytes.Buffer
	if err := SARIF(&b, machineVerdict(), ""); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func compileSchema(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft4
	c.AssertFormat = true
	f, err := os.Open(filepath.Join("testdata", "schema", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	url := "file:///schema/" + name
	if err := c.AddResource(url, f); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(url)
	if err != nil {
		t.Fatalf("compile %s: %v", name, err)
	}
	return s
}

func validate(t *testing.T, s *jsonschema.Schema, data []byte) {
	t.Helper()
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, data)
	}
	if err := s.Validate(doc); err != nil {
		t.Errorf("%#v\n%s", err, data)
	}
}

func TestReplacement(t *testing.T) {
	head := review.Finding{LineStart: 3, LineEnd: 4, Side: review.SideRight}
	tests := map[string]struct {
		f    review.Finding
		want string
		ok   bool
	}{
		"fenced code":           {with(head, "```go\na := 1\nb := 2\n```"), "a := 1\nb := 2", true},
		"longer fence, CRLF":    {with(head, "````\r\nx := \"```\"\r\n````\r\n"), "x := \"```\"", true},
		"empty block deletes":   {with(head, "```\n```"), "", true},
		"prose":                 {with(head, "Return the error."), "", false},
		"prose around code":     {with(head, "Use this:\n```\nx\n```"), "", false},
		"two blocks":            {with(head, "```\na\n```\n```\nb\n```"), "", false},
		"unclosed":              {with(head, "```\na"), "", false},
		"removed lines":         {with(review.Finding{LineStart: 3, LineEnd: 3, Side: review.SideLeft}, "```\nx\n```"), "", false},
		"whole file":            {with(review.Finding{}, "```\nx\n```"), "", false},
		"closing fence shorter": {with(head, "````\nx\n```"), "", false},
		"does not apply":        {review.Finding{LineStart: 3, LineEnd: 4, Side: review.SideRight, Suggestion: "```\nx(\n```", SuggestionNote: "a syntax error"}, "", false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, ok := replacement(tc.f)
			if got != tc.want || ok != tc.ok {
				t.Errorf("replacement = %q, %v; want %q, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func with(f review.Finding, suggestion string) review.Finding {
	f.Suggestion = suggestion
	return f
}
