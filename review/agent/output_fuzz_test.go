package agent

import (
	"math"
	"testing"

	"github.com/mergeguard/mergeguard/internal/allocs"
	"github.com/mergeguard/mergeguard/review"
)

// FuzzParseOutput feeds arbitrary model replies to ParseOutput: it must never
// panic nor allocate out of proportion to the reply, and every finding it accepts must be storable as it is (valid
// enums, ordered non-negative lines, confidence within 0..1).
func FuzzParseOutput(f *testing.F) {
	for _, seed := range []string{
		`{"findings":[],"positive_notes":[]}`,
		"Here you go:\n```json\n{\"findings\":[{\"file_path\":\"a.go\",\"line_start\":3,\"line_end\":1,\"severity\":\"CRITICAL\",\"category\":\"security\",\"title\":\"t\",\"confidence\":7}]}\n```",
		`{"findings":[{"file_path":"./x.py","line_start":-4,"line_end":-9,"side":"left","severity":"urgent","category":"vibes","confidence":-1}]}`,
		`{"findings": null}`,
		`{"findings":[{"line_start":1e99}]}`,
		"```\n{\"findings\":[{\"title\":\"unterminated\"\n```",
		`not json at all`,
		`{`,
		`}{`,
		"```json\n```",
	} {
		f.Add(seed)
	}
	bound := allocs.Bound{PerByte: 64, Fixed: 1 << 20}
	f.Fuzz(func(t *testing.T, reply string) {
		var (
			out Output
			err error
		)
		if merr := bound.Check(len(reply), func() { out, err = ParseOutput(reply) }); merr != nil {
			t.Fatalf("ParseOutput: %v", merr)
		}
		if err != nil {
			return
		}
		for _, fd := range out.Findings {
			if fd.Severity.Rank() == 0 {
				t.Errorf("severity %q is not valid", fd.Severity)
			}
			if _, err := review.ParseCategory(string(fd.Category)); err != nil {
				t.Errorf("category: %v", err)
			}
			if fd.Side != review.SideLeft && fd.Side != review.SideRight {
				t.Errorf("side %q", fd.Side)
			}
			if fd.LineStart < 0 || fd.LineEnd < fd.LineStart {
				t.Errorf("lines %d..%d", fd.LineStart, fd.LineEnd)
			}
			if math.IsNaN(fd.Confidence) || fd.Confidence < 0 || fd.Confidence > 1 {
				t.Errorf("confidence %v", fd.Confidence)
			}
		}
	})
}
