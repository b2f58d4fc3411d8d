package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/mergeguard/mergeguard/review/text"
)

// Report is the output of an evaluation: its settings, its figures and
// every case. It is the JSON of --out, which --resume reads back.
type Report struct {
	Settings Settings     `json:"settings"`
	Summary  Summary      `json:"summary"`
	Cases    []CaseResult `json:"cases"`
}

// Settings say how an evaluation was run.
type Settings struct {
	Dataset       string `json:"dataset"`
	Model         string `json:"model"` // "" for analyzers only
	JudgeModel    string `json:"judge_model,omitempty"`
	LineTolerance int    `json:"line_tolerance"`
	ContextOnly   bool   `json:"context_only,omitempty"`
	// ElapsedMS is the evaluation's wall time, cases in parallel.
	ElapsedMS int64 `json:"elapsed_ms"`
}

// WriteJSON writes the report as indented JSON.
func WriteJSON(w io.Writer, r Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// ReadJSON reads a report WriteJSON wrote.
func ReadJSON(data []byte) (Report, error) {
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return r, fmt.Errorf("read report: %w", err)
	}
	return r, nil
}

func pct(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }

// model names the reviewer of the settings.
func (s Settings) model() string {
	if s.ContextOnly {
		return "none (context only: the first prompts are recorded, nothing is reported)"
	}
	if s.Model == "" {
		return "analyzers only"
	}
	return s.Model
}

// WriteText writes the report as tables for a terminal: the cases, then
// the figures per severity and overall.
func WriteText(w io.Writer, r Report) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if r.Settings.ContextOnly {
		fmt.Fprintln(tw, "CASE\tLANG\tKIND\tCONTEXT\tPROMPTS\tMISSING")
		for _, c := range r.Cases {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", c.ID, c.Language, c.Kind, contextCell(c), promptsOf(c), missingOf(c))
		}
	} else {
		fmt.Fprintln(tw, "CASE\tLANG\tKIND\tGOLDEN\tFOUND\tFINDINGS\tMATCHED\tF1\tREJECTED\tDUP\tTOKENS\tCOST\tWALL")
		for _, c := range r.Cases {
			if c.Error != "" {
				fmt.Fprintf(tw, "%s\t%s\t%s\terror: %s\n", c.ID, c.Language, c.Kind, text.OneLine(c.Error))
				continue
			}
			m := c.matched()
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%.2f\t%d\t%d\t%d\t$%.4f\t%dms\n", c.ID, c.Language, c.Kind,
				len(c.Golden), m.golden, len(c.Findings), m.findings, c.F1, c.FalsePositives, c.Duplicates,
				c.InputTokens+c.OutputTokens, c.Cost, c.WallMS)
		}
	}
	fmt.Fprintln(tw)
	writeSummaryText(tw, r)
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// writeSummaryText writes the figures of the report.
func writeSummaryText(w io.Writer, r Report) {
	s := r.Summary
	fmt.Fprintf(w, "reviewer: %s; matching: %s; %d cases (%d clean, %d errors) in %.1fs\n",
		r.Settings.model(), matching(r.Settings), s.Cases, s.CleanCases, s.Errors, float64(r.Settings.ElapsedMS)/1000)
	if s.Context != nil {
		fmt.Fprintf(w, "context recall: %s (%d of %d cases: the first prompt holds the lines needed to see the defect); prompts over the context budget: %d\n",
			pct(s.Context.Recall), s.Context.Seen, s.Context.Cases, s.Context.Overflows)
	}
	if r.Settings.ContextOnly {
		return
	}
	fmt.Fprintln(w, "SEVERITY\tGOLDEN\tFOUND\tRECALL\tFINDINGS\tMATCHED\tPRECISION")
	for _, e := range s.BySeverity {
		fmt.Fprintf(w, "%s\t%d\t%d\t%s\t%d\t%d\t%s\n", e.Severity, e.Golden, e.MatchedGolden, pct(e.Recall), e.Findings, e.MatchedFindings, pct(e.Precision))
	}
	fmt.Fprintf(w, "all\t%d\t%d\t%s\t%d\t%d\t%s\n", s.Golden, s.MatchedGolden, pct(s.Recall), s.Findings, s.MatchedFindings, pct(s.Precision))
	fmt.Fprintf(w, "precision %s, recall %s, F1 %.3f\n", pct(s.Precision), pct(s.Recall), s.F1)
	fmt.Fprintf(w, "findings on clean cases: %d (on %d of %d clean cases)\n", s.CleanFindings, s.CleanCasesFlagged, s.CleanCases)
	fmt.Fprintf(w, "rejected by the verifier (hallucinated anchors): %d, %s of all findings; duplicates: %d, %s\n",
		s.FalsePositives, pct(s.FalsePositiveShare), s.Duplicates, pct(s.DuplicateRate))
	fmt.Fprintf(w, "tokens: %d in, %d out; cost $%.4f (judge $%.4f); mean wall time per case %dms\n",
		s.InputTokens, s.OutputTokens, s.Cost, s.JudgeCost, s.MeanWallMS)
}

func matching(s Settings) string {
	if s.ContextOnly {
		return "none"
	}
	if s.JudgeModel != "" {
		return "judge " + s.JudgeModel
	}
	return fmt.Sprintf("location (±%d lines)", s.LineTolerance)
}

func contextCell(c CaseResult) string {
	switch {
	case c.Error != "":
		return "error: " + text.OneLine(c.Error)
	case c.Context == nil || !c.Context.Known:
		if c.Context != nil && c.Context.Reason != "" {
			return "n/a (" + c.Context.Reason + ")"
		}
		return "n/a"
	case c.Context.Seen:
		return "seen"
	}
	return "missed"
}

func promptsOf(c CaseResult) int {
	if c.Context == nil {
		return 0
	}
	return c.Context.Prompts
}

func missingOf(c CaseResult) string {
	if c.Context == nil {
		return ""
	}
	return strings.Join(c.Context.Missing, ", ")
}

// WriteMarkdown writes the report as markdown: the figures, then a table
// of the cases.
func WriteMarkdown(w io.Writer, r Report) error {
	s := r.Summary
	var b strings.Builder
	fmt.Fprintf(&b, "# MergeGuard evaluation\n\nReviewer: %s. Matching: %s. %d cases (%d clean, %d errors), %.1f s.\n\n",
		r.Settings.model(), matching(r.Settings), s.Cases, s.CleanCases, s.Errors, float64(r.Settings.ElapsedMS)/1000)
	if s.Context != nil {
		fmt.Fprintf(&b, "Context recall: **%s** (%d of %d cases); prompts over the context budget: %d.\n\n", pct(s.Context.Recall), s.Context.Seen, s.Context.Cases, s.Context.Overflows)
	}
	if !r.Settings.ContextOnly {
		fmt.Fprintf(&b, "| | golden | found | recall | findings | matched | precision |\n|---|---:|---:|---:|---:|---:|---:|\n")
		for _, e := range s.BySeverity {
			fmt.Fprintf(&b, "| %s | %d | %d | %s | %d | %d | %s |\n", e.Severity, e.Golden, e.MatchedGolden, pct(e.Recall), e.Findings, e.MatchedFindings, pct(e.Precision))
		}
		fmt.Fprintf(&b, "| **all** | %d | %d | **%s** | %d | %d | **%s** |\n\n", s.Golden, s.MatchedGolden, pct(s.Recall), s.Findings, s.MatchedFindings, pct(s.Precision))
		fmt.Fprintf(&b, "F1 **%.3f**. Findings on clean cases: %d (on %d of %d). Rejected by the verifier: %d (%s). Duplicates: %d (%s). Tokens %d in, %d out; cost $%.4f, judge $%.4f.\n\n",
			s.F1, s.CleanFindings, s.CleanCasesFlagged, s.CleanCases, s.FalsePositives, pct(s.FalsePositiveShare),
			s.Duplicates, pct(s.DuplicateRate), s.InputTokens, s.OutputTokens, s.Cost, s.JudgeCost)
	}
	b.WriteString("| case | language | kind | golden | found | findings | matched | precision | recall | F1 | rejected | context | wall |\n|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|\n")
	for _, c := range r.Cases {
		m := c.matched()
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %d | %d | %d | %s | %s | %.2f | %d | %s | %d ms |\n", c.ID, c.Language, c.Kind,
			len(c.Golden), m.golden, len(c.Findings), m.findings, pct(c.Precision), pct(c.Recall), c.F1, c.FalsePositives, strings.ReplaceAll(contextCell(c), "|", "\\|"), c.WallMS)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write markdown: %w", err)
	}
	return nil
}
