package report

import (
	"encoding/json"
	"io"
	"strings"

	"github.com/mergeguard/mergeguard/review"
)

type rdResult struct {
	Source      rdSource       `json:"source"`
	Diagnostics []rdDiagnostic `json:"diagnostics"`
}

type rdSource struct {
	Name string `json:"name"`
	URL  string `json:"url,omitempty"`
}

type rdDiagnostic struct {
	Message     string         `json:"message"`
	Location    rdLocation     `json:"location"`
	Severity    string         `json:"severity"`
	Code        rdCode         `json:"code"`
	Suggestions []rdSuggestion `json:"suggestions,omitempty"`
}

type rdLocation struct {
	Path  string   `json:"path"`
	Range *rdRange `json:"range,omitempty"`
}

type rdRange struct {
	Start rdPosition `json:"start"`
	End   rdPosition `json:"end"`
}

type rdPosition struct {
	Line   int `json:"line"`
	Column int `json:"column,omitempty"`
}

type rdCode struct {
	Value string `json:"value"`
	URL   string `json:"url,omitempty"`
}

type rdSuggestion struct {
	Range rdRange `json:"range"`
	Text  string  `json:"text"`
}

// RDJSON writes v in reviewdog's Diagnostic Format (rdjson): the source
// "mergeguard" and one diagnostic per reported finding, with the message
// (title, description, suggestion), the repository-relative path and the
// cited lines (no range for a finding on removed lines or on a whole
// file), the severity (ERROR for critical, WARNING for warning, INFO for
// info and style), the column when the finding's tool gave one, and as
// the code the category of the model's findings, or the rule of a tool's
// (as in SARIF: shellcheck/SC2086, govet/printf) with its documentation. A suggestion that is one
// fenced code block on a finding with head lines replaces exactly the
// cited lines: it becomes a line-based rdjson suggestion (a range without
// columns) that reviewdog can post as a GitHub suggestion, and is left out
// of the message.
func RDJSON(w io.Writer, v review.Verdict) error {
	out := rdResult{Source: rdSource{Name: "mergeguard", URL: sarifToolURI}, Diagnostics: []rdDiagnostic{}}
	for _, f := range v.Findings() {
		code, replaces := replacement(f)
		d := rdDiagnostic{
			Message:  message(f, replaces),
			Location: rdLocation{Path: f.FilePath},
			Severity: rdSeverity(f.Severity),
			Code:     rdCode{Value: string(f.Category)},
		}
		if strings.HasPrefix(f.Agent, "analyzer:") { // a tool's check
			r := ruleOf(f)
			d.Code = rdCode{Value: r.id, URL: r.helpURI}
		}
		if start, end, ok := headLines(f); ok {
			r := rdRange{Start: rdPosition{Line: start}, End: rdPosition{Line: end}}
			if replaces {
				d.Suggestions = []rdSuggestion{{Range: r, Text: code}}
			}
			r.Start.Column = f.Column // the suggestion's range stays line-based
			d.Location.Range = &r
		}
		out.Diagnostics = append(out.Diagnostics, d)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// rdSeverity maps a severity to reviewdog's.
func rdSeverity(s review.Severity) string {
	switch s {
	case review.SeverityCritical:
		return "ERROR"
	case review.SeverityWarning:
		return "WARNING"
	}
	return "INFO"
}
