package memory_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/memory"
)

func TestWords(t *testing.T) {
	tests := map[string]struct {
		in   string
		want []string
	}{
		"lowercased, stop words and numbers dropped": {"The Error on line 42 IS capitalized", []string{"error", "line", "capitalized"}},
		"identifiers replaced":                       {"loadConfig returns user_id and v2", []string{"_id", "return", "_id", "_id"}},
		"plural trimmed, not -ss":                    {"errors pass strings", []string{"error", "pass", "string"}},
		"punctuation splits":                         {`fmt.Errorf("Failed: %w", err)`, []string{"fmt", "errorf", "failed", "w", "err"}},
		"invalid UTF-8 dropped":                      {"bad \xff byte", []string{"bad", "byte"}},
		"empty":                                      {"", nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, memory.Words(tc.in)); diff != "" {
				t.Errorf("Words(%q) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

func TestSimilarity(t *testing.T) {
	nit := review.Finding{Category: review.CategoryQuality, Title: "Error string should not be capitalized",
		Description: "Go error strings should not be capitalized; lowercase the message returned by loadConfig on line 12.",
		CodeSnippet: `return fmt.Errorf("Failed to load config: %w", err)`}
	tests := map[string]struct {
		a, b     review.Finding
		min, max float64
	}{
		"identical": {a: nit, b: nit, min: 1, max: 1},
		"other identifiers, lines and code": {a: nit, b: review.Finding{Category: review.CategoryQuality,
			Title:       "Error string should not be capitalized",
			Description: "Go error strings should not be capitalized; lowercase the message returned by parseUser on line 301.",
			CodeSnippet: `return errors.New("Invalid user")`}, min: 0.7, max: 1},
		"reworded": {a: nit, b: review.Finding{Category: review.CategoryQuality,
			Title:       "Do not capitalize error messages",
			Description: "By Go convention error messages start with a lowercase letter; the one from saveOrder is capitalized.",
			CodeSnippet: `return fmt.Errorf("Could not save the order")`}, min: memory.Threshold, max: 1},
		"another problem of the same words": {a: nit, b: review.Finding{Category: review.CategoryQuality,
			Title:       "Wrap the error with %w to keep its cause",
			Description: "The error from readFile is formatted with %v, which loses it for errors.Is; use %w.",
			CodeSnippet: `return fmt.Errorf("read: %v", err)`}, min: 0, max: memory.Threshold - 0.01},
		"another category":   {a: nit, b: func() review.Finding { f := nit; f.Category = review.CategoryBug; return f }(), min: 0, max: 0},
		"nothing to compare": {a: review.Finding{Category: review.CategoryBug}, b: review.Finding{Category: review.CategoryBug}, min: 0, max: 0},
		"fields bounded": {a: review.Finding{Category: review.CategoryBug, Title: strings.Repeat("word ", 10000)},
			b: review.Finding{Category: review.CategoryBug, Title: strings.Repeat("word ", 10000) + " tail"}, min: 1, max: 1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ab := memory.Similarity(memory.Sign(tc.a), memory.Sign(tc.b))
			ba := memory.Similarity(memory.Sign(tc.b), memory.Sign(tc.a))
			if ab != ba {
				t.Errorf("not symmetric: %v and %v", ab, ba)
			}
			if ab < tc.min || ab > tc.max {
				t.Errorf("similarity %.3f, want within [%.2f, %.2f]", ab, tc.min, tc.max)
			}
		})
	}
}

// dismissed returns n dismissals of f on pull requests 1..n, a minute
// apart from at.
func dismissed(f review.Finding, n int, at time.Time) []memory.Dismissal {
	out := make([]memory.Dismissal, n)
	for i := range out {
		out[i] = memory.Dismissal{PRNumber: i + 1, Fingerprint: "fp", Finding: f, By: "writer",
			How: review.DismissedThreadResolved, At: at.Add(time.Duration(i) * time.Minute), CommentID: int64(100 + i)}
	}
	return out
}

func TestSuppress(t *testing.T) {
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	nit := review.Finding{Category: review.CategoryQuality, Severity: review.SeverityStyle, Agent: "reviewer",
		Title: "Error string should not be capitalized", Description: "Lowercase the error string."}
	secret := review.Finding{Category: review.CategorySecurity, Severity: review.SeverityCritical, Agent: "analyzer:secrets",
		Title: "AWS access key committed", Description: "An AWS access key id is committed; rotate it."}
	// A secret detector's finding of a lower severity is a secret all the same.
	warnSecret := secret
	warnSecret.Severity, warnSecret.Agent = review.SeverityWarning, "analyzer:private-keys"
	criticalSecurity := review.Finding{Category: review.CategorySecurity, Severity: review.SeverityCritical, Agent: "reviewer",
		Title: "SQL injection in the search handler", Description: "The query concatenates the search term."}
	warningSecurity := criticalSecurity
	warningSecurity.Severity = review.SeverityWarning
	criticalBug := review.Finding{Category: review.CategoryBug, Severity: review.SeverityCritical, Agent: "reviewer",
		Title: "Nil pointer dereference", Description: "The lookup result is dereferenced unchecked."}
	tests := map[string]struct {
		f          review.Finding
		dismissals int
		n          int
		revived    *time.Time
		suppressed bool
	}{
		"a nit dismissed N times":           {f: nit, dismissals: 3, n: 3, suppressed: true},
		"a nit dismissed fewer times":       {f: nit, dismissals: 2, n: 3},
		"N of 1":                            {f: nit, dismissals: 1, n: 1, suppressed: true},
		"memory off (N 0)":                  {f: nit, dismissals: 5, n: 0},
		"a secret, never":                   {f: secret, dismissals: 5, n: 3},
		"a secret of a lower severity":      {f: warnSecret, dismissals: 5, n: 3},
		"a critical security finding":       {f: criticalSecurity, dismissals: 5, n: 3},
		"a security warning may be":         {f: warningSecurity, dismissals: 5, n: 3, suppressed: true},
		"a critical bug may be":             {f: criticalBug, dismissals: 5, n: 3, suppressed: true},
		"revived after the dismissals":      {f: nit, dismissals: 5, n: 3, revived: ptr(at.Add(time.Hour))},
		"revived before enough new ones":    {f: nit, dismissals: 5, n: 3, revived: ptr(at.Add(150 * time.Second))},
		"revived before all the dismissals": {f: nit, dismissals: 5, n: 3, revived: ptr(at.Add(-time.Hour)), suppressed: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var revivals []memory.Revival
			if tc.revived != nil {
				revivals = []memory.Revival{{Finding: tc.f, By: "writer", At: *tc.revived}}
			}
			m := memory.New(dismissed(tc.f, tc.dismissals, at), revivals)
			other := review.Finding{Category: review.CategoryPerformance, Title: "Regexp compiled on every call"}
			kept, suppressed := m.Suppress([]review.Finding{other, tc.f}, tc.n)
			want := []review.Finding{other, tc.f}
			if tc.suppressed {
				want = want[:1]
				if len(suppressed) != 1 || len(suppressed[0].Matches) < tc.n {
					t.Fatalf("suppressed %+v, want the finding with at least %d matches", suppressed, tc.n)
				}
				if m := suppressed[0].Matches[0]; m.PRNumber == 0 || m.CommentID == 0 || m.By != "writer" || m.Similarity != 1 {
					t.Errorf("match %+v does not link its dismissal", m)
				}
			} else if len(suppressed) != 0 {
				t.Errorf("suppressed %+v, want none", suppressed)
			}
			if diff := cmp.Diff(want, kept); diff != "" {
				t.Errorf("kept (-want +got):\n%s", diff)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestNilMemory(t *testing.T) {
	var m *memory.Memory
	f := []review.Finding{{Title: "x"}}
	kept, suppressed := m.Suppress(f, 3)
	if len(kept) != 1 || suppressed != nil || m.Matches(f[0]) != nil {
		t.Errorf("a nil memory suppressed %v, kept %v", suppressed, kept)
	}
}

func TestNote(t *testing.T) {
	for n, want := range map[int]string{0: "", 1: "1 finding not posted", 3: "3 findings not posted"} {
		if got := memory.Note(n); !strings.HasPrefix(got, want) || (want == "") != (got == "") {
			t.Errorf("Note(%d) = %q, want it to start with %q", n, got, want)
		}
	}
}
