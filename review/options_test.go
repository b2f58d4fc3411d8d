package review_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/review"
)

func TestOptionsNormalize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      review.Options
		want    review.Options
		wantErr string
	}{
		{"empty", review.Options{}, review.Options{}, ""},
		{"any case", review.Options{FocusAreas: []review.Category{"Security", " BUG"}, SeverityThreshold: "WARNING", IncludeStyle: true},
			review.Options{FocusAreas: []review.Category{"security", "bug"}, SeverityThreshold: "warning", IncludeStyle: true}, ""},
		{"pull request flags kept", review.Options{Full: true, Describe: true, Title: "t"}, review.Options{Full: true, Describe: true, Title: "t"}, ""},
		{"bad focus area", review.Options{FocusAreas: []review.Category{"security", "vibes"}}, review.Options{},
			`focus_areas: unknown category "vibes" (want security, bug, performance or quality)`},
		{"bad severity", review.Options{SeverityThreshold: "urgent"}, review.Options{},
			`severity_threshold: unknown severity "urgent" (want critical, warning, info or style)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.in.Normalize()
			if got := errText(err); got != tt.wantErr {
				t.Fatalf("error %q, want %q", got, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Normalize (-want +got):\n%s", diff)
			}
		})
	}
}

// errText is err's text, "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
