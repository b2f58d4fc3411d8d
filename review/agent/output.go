package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mergeguard/mergeguard/review"
)

// Output is the structured answer a reviewer agent ends with.
type Output struct {
	Findings      []review.Finding `json:"findings"`
	PositiveNotes []PositiveNote   `json:"positive_notes"`
}

// PositiveNote is something the model found done well in a file.
type PositiveNote struct {
	FilePath string `json:"file_path"`
	Note     string `json:"note"`
}

// OutputSchema is the JSON schema of the final answer, strict-mode ready
// (every property required, no additional properties), sent as
// response_format json_schema and quoted in the system prompt.
const OutputSchema = `{
  "type": "object",
  "additionalProperties": false,
  "required": ["findings", "positive_notes"],
  "properties": {
    "findings": {
      "type": "array",
      "items": {
        "type": "object",
        "additionalProperties": false,
        "required": ["file_path", "line_start", "line_end", "side", "severity", "category", "title", "description", "suggestion", "code_snippet", "confidence"],
        "properties": {
          "file_path": {"type": "string", "description": "path of a file in the diff"},
          "line_start": {"type": "integer", "description": "first line of the problem, new-file number for RIGHT, old-file number for LEFT"},
          "line_end": {"type": "integer", "description": "last line of the problem (same as line_start for one line)"},
          "side": {"type": "string", "enum": ["RIGHT", "LEFT"], "description": "RIGHT for added or unchanged lines, LEFT for deleted lines"},
          "severity": {"type": "string", "enum": ["critical", "warning", "info", "style"]},
          "category": {"type": "string", "enum": ["security", "bug", "performance", "quality"]},
          "title": {"type": "string", "description": "one line"},
          "description": {"type": "string", "description": "what is wrong and why it matters"},
          "suggestion": {"type": "string", "description": "how to fix it; replacement code when the fix is a plain replacement of the cited lines; empty if none"},
          "code_snippet": {"type": "string", "description": "the cited lines copied verbatim from the diff, without +/- prefixes or line numbers"},
          "confidence": {"type": "number", "description": "0 to 1"}
        }
      }
    },
    "positive_notes": {
      "type": "array",
      "items": {
        "type": "object",
        "additionalProperties": false,
        "required": ["file_path", "note"],
        "properties": {
          "file_path": {"type": "string"},
          "note": {"type": "string"}
        }
      }
    }
  }
}`

// rawOutput is the answer as the model wrote it, before normalisation.
type rawOutput struct {
	Findings      []rawFinding   `json:"findings"`
	PositiveNotes []PositiveNote `json:"positive_notes"`
}

type rawFinding struct {
	FilePath    string  `json:"file_path"`
	LineStart   int     `json:"line_start"`
	LineEnd     int     `json:"line_end"`
	Side        string  `json:"side"`
	Severity    string  `json:"severity"`
	Category    string  `json:"category"`
	Title       string  `json:"title"`
	Description string  `json:"description"`
	Suggestion  string  `json:"suggestion"`
	CodeSnippet string  `json:"code_snippet"`
	Confidence  float64 `json:"confidence"`
}

// ParseOutput reads a model's final answer: a JSON object, bare or inside a
// fenced code block, possibly surrounded by prose. Values outside the enums
// are normalised (unknown severity → info, unknown category → quality,
// side → RIGHT); a reply without a JSON object of the right shape is an
// error, whose text is shown to the model when it is asked again.
func ParseOutput(content string) (Output, error) {
	text := extractJSON(content)
	if text == "" {
		return Output{}, errors.New("the reply contains no JSON object")
	}
	var raw rawOutput
	if err := json.Unmarshal([]byte(text), &raw); err != nil {
		return Output{}, fmt.Errorf("the reply is not valid JSON of the required shape: %w", err)
	}
	if raw.Findings == nil && !strings.Contains(text, `"findings"`) {
		return Output{}, errors.New(`the reply has no "findings" array`)
	}
	out := Output{PositiveNotes: raw.PositiveNotes}
	for _, r := range raw.Findings {
		out.Findings = append(out.Findings, r.normalise())
	}
	return out, nil
}

// normalise turns a raw finding into a review.Finding with valid enums.
func (r rawFinding) normalise() review.Finding {
	sev, err := review.ParseSeverity(r.Severity)
	if err != nil {
		sev = review.SeverityInfo
	}
	cat, err := review.ParseCategory(r.Category)
	if err != nil {
		cat = review.CategoryQuality
	}
	side := review.SideRight
	if strings.EqualFold(strings.TrimSpace(r.Side), string(review.SideLeft)) {
		side = review.SideLeft
	}
	// A model may cite line 0 or a negative line; keep the finding (the
	// verifier judges it) but within what a stored finding may hold.
	start := max(r.LineStart, 0)
	end := max(r.LineEnd, start)
	return review.Finding{
		FilePath:    strings.TrimPrefix(r.FilePath, "./"), // a path is data: never trimmed
		LineStart:   start,
		LineEnd:     end,
		Side:        side,
		Severity:    sev,
		Category:    cat,
		Title:       strings.TrimSpace(r.Title),
		Description: strings.TrimSpace(r.Description),
		Suggestion:  r.Suggestion,
		CodeSnippet: r.CodeSnippet,
		Confidence:  min(max(r.Confidence, 0), 1),
	}
}

// extractJSON returns the JSON object of a reply: the content of the first
// fenced block holding one, else the text from the first "{" to the last "}".
func extractJSON(content string) string {
	rest := content
	for {
		i := strings.Index(rest, "```")
		if i < 0 {
			break
		}
		block := rest[i+3:]
		j := strings.Index(block, "```")
		if j < 0 {
			break
		}
		body := block[:j]
		if nl := strings.IndexByte(body, '\n'); nl >= 0 && !strings.Contains(body[:nl], "{") {
			body = body[nl+1:] // drop the info string ("json")
		}
		if body = strings.TrimSpace(body); strings.HasPrefix(body, "{") {
			return body
		}
		rest = block[j+3:]
	}
	start, end := strings.IndexByte(content, '{'), strings.LastIndexByte(content, '}')
	if start < 0 || end < start {
		return ""
	}
	return content[start : end+1]
}
