package store

import (
	"fmt"

	"github.com/mergeguard/mergeguard/review"
)

// Options are the review options of a run (DESIGN.md section 6), stored as
// JSON in its Options: the options object of POST /api/review.
type Options struct {
	FocusAreas        []review.Category `json:"focus_areas,omitempty"`
	SeverityThreshold review.Severity   `json:"severity_threshold,omitempty"`
	IncludeStyle      bool              `json:"include_style,omitempty"`
}

// Normalize checks the option values, accepting names in any case, and
// returns them in canonical form (lower case). Its error names the first
// bad value by its key ("focus_areas: ...").
func (o Options) Normalize() (Options, error) {
	out := Options{IncludeStyle: o.IncludeStyle}
	for _, f := range o.FocusAreas {
		c, err := review.ParseCategory(string(f))
		if err != nil {
			return Options{}, fmt.Errorf("focus_areas: %w", err)
		}
		out.FocusAreas = append(out.FocusAreas, c)
	}
	if o.SeverityThreshold != "" {
		s, err := review.ParseSeverity(string(o.SeverityThreshold))
		if err != nil {
			return Options{}, fmt.Errorf("severity_threshold: %w", err)
		}
		out.SeverityThreshold = s
	}
	return out, nil
}
