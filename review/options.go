package review

import "fmt"

// Options are the review settings a request may give (docs/architecture.md:
// the options object of POST /api/review), over the repository's
// configuration; empty values leave the repository's setting. Runs store them
// as this JSON.
type Options struct {
	FocusAreas        []Category `json:"focus_areas,omitempty"`
	SeverityThreshold Severity   `json:"severity_threshold,omitempty"`
	IncludeStyle      bool       `json:"include_style,omitempty"`
	// Full forces a full review of a pull request, never an incremental
	// one (/mergeguard full-review, rerun --full); other runs ignore it.
	Full bool `json:"full,omitempty"`
	// Describe writes the walkthrough of a pull request run into the pull
	// request's description once the review is posted (/mergeguard
	// describe); other runs ignore it, and so does the review itself.
	Describe bool `json:"describe,omitempty"`
	// Title names a diff run in the web UI (the title of POST /api/review);
	// the review itself ignores it.
	Title string `json:"title,omitempty"`
}

// Normalize checks the option values, accepting names in any case, and
// returns them in canonical form (lower case). Its error names the first
// bad value by its key ("focus_areas: ...").
func (o Options) Normalize() (Options, error) {
	out := Options{IncludeStyle: o.IncludeStyle, Full: o.Full, Describe: o.Describe, Title: o.Title}
	for _, f := range o.FocusAreas {
		c, err := ParseCategory(string(f))
		if err != nil {
			return Options{}, fmt.Errorf("focus_areas: %w", err)
		}
		out.FocusAreas = append(out.FocusAreas, c)
	}
	if o.SeverityThreshold != "" {
		s, err := ParseSeverity(string(o.SeverityThreshold))
		if err != nil {
			return Options{}, fmt.Errorf("severity_threshold: %w", err)
		}
		out.SeverityThreshold = s
	}
	return out, nil
}
