package eval

import (
	"cmp"
	"slices"

	"github.com/mergeguard/mergeguard/review"
)

// CaseResult is the scored review of one case.
type CaseResult struct {
	ID       string `json:"id"`
	Language string `json:"language,omitempty"`
	Kind     string `json:"kind,omitempty"`
	Clean    bool   `json:"clean"`
	// Golden and Findings are the case's golden comments and the review's
	// reported findings, each with what it matched.
	Golden   []GoldenResult  `json:"golden"`
	Findings []FindingResult `json:"findings"`
	Pairs    []Pair          `json:"pairs"`
	// FalsePositives counts the findings the verifier rejected
	// (hallucinated files, lines or snippets): never reported.
	FalsePositives int `json:"false_positives"`
	// Precision, Recall and F1 of this case alone.
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
	// Duplicates counts reported findings that repeat an earlier one.
	Duplicates   int     `json:"duplicates"`
	InputTokens  int     `json:"input_tokens"`
	OutputTokens int     `json:"output_tokens"`
	Cost         float64 `json:"cost"`
	JudgeCost    float64 `json:"judge_cost,omitempty"`
	WallMS       int64   `json:"wall_ms"`
	// Context is the context recall of the case's first prompts (with
	// --context-only), nil when not measured.
	Context *ContextResult `json:"context,omitempty"`
	Notes   []string       `json:"notes,omitempty"`
	// Error is why the case could not be reviewed; such a case is left
	// out of the figures.
	Error string `json:"error,omitempty"`
}

// GoldenResult is one golden comment and whether a finding matched it.
type GoldenResult struct {
	File     string `json:"file,omitempty"`
	Line     int    `json:"line,omitempty"`
	Severity string `json:"severity,omitempty"`
	Text     string `json:"text"`
	Matched  bool   `json:"matched"`
}

// FindingResult is one reported finding and the golden comment it
// matched (-1 for none).
type FindingResult struct {
	File      string `json:"file"`
	LineStart int    `json:"line_start"`
	LineEnd   int    `json:"line_end"`
	Severity  string `json:"severity"`
	Category  string `json:"category"`
	Title     string `json:"title"`
	Agent     string `json:"agent,omitempty"`
	Status    string `json:"verification_status"`
	Golden    int    `json:"golden"`
	Duplicate bool   `json:"duplicate,omitempty"`
}

// Score scores one case from its reported findings and the pairs Match
// made. A finding matches the lowest golden comment it is paired with; it
// is a duplicate when an earlier finding already matched that golden
// comment, or, unmatched, when an earlier unmatched finding is on the same
// file, overlapping lines and category.
func Score(c Case, findings []review.Finding, pairs []Pair) CaseResult {
	r := CaseResult{ID: c.ID, Language: c.Language, Kind: c.Kind, Clean: c.Clean, Pairs: pairs,
		Golden: make([]GoldenResult, len(c.Golden)), Findings: make([]FindingResult, len(findings))}
	for i, g := range c.Golden {
		start, _ := g.Lines()
		r.Golden[i] = GoldenResult{File: g.File, Line: start, Severity: g.Severity, Text: g.Text}
	}
	for i, f := range findings {
		r.Findings[i] = FindingResult{File: f.FilePath, LineStart: f.LineStart, LineEnd: f.LineEnd,
			Severity: string(f.Severity), Category: string(f.Category), Title: f.Title, Agent: f.Agent,
			Status: string(f.VerificationStatus), Golden: -1}
	}
	for _, p := range pairs {
		r.Golden[p.Golden].Matched = true
		if g := r.Findings[p.Finding].Golden; g < 0 || p.Golden < g {
			r.Findings[p.Finding].Golden = p.Golden
		}
	}
	r.Duplicates = markDuplicates(r.Findings, findings)
	m := r.matched()
	r.Precision, r.Recall = ratio(m.findings, len(findings)), ratio(m.golden, len(c.Golden))
	r.F1 = f1(r.Precision, r.Recall)
	return r
}

// markDuplicates flags the findings that repeat an earlier one and
// returns how many.
func markDuplicates(res []FindingResult, findings []review.Finding) int {
	n := 0
	for i := range res {
		for j := range i {
			same := res[i].Golden >= 0 && res[i].Golden == res[j].Golden
			if res[i].Golden < 0 && res[j].Golden < 0 {
				a, b := findings[i], findings[j]
				same = a.FilePath == b.FilePath && a.Category == b.Category &&
					a.LineStart <= max(b.LineEnd, b.LineStart) && b.LineStart <= max(a.LineEnd, a.LineStart)
			}
			if same {
				res[i].Duplicate = true
				n++
				break
			}
		}
	}
	return n
}

// counts are the matched golden comments and findings of a case.
type counts struct{ golden, findings int }

func (r CaseResult) matched() counts {
	var c counts
	for _, g := range r.Golden {
		if g.Matched {
			c.golden++
		}
	}
	for _, f := range r.Findings {
		if f.Golden >= 0 {
			c.findings++
		}
	}
	return c
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func f1(p, r float64) float64 {
	if p+r == 0 {
		return 0
	}
	return 2 * p * r / (p + r)
}

// Summary is the figures of a whole evaluation.
type Summary struct {
	Cases      int `json:"cases"`
	CleanCases int `json:"clean_cases"`
	// Errors counts the cases that could not be reviewed; they are left
	// out of every other figure.
	Errors          int     `json:"errors"`
	Golden          int     `json:"golden"`
	MatchedGolden   int     `json:"matched_golden"`
	Findings        int     `json:"findings"`
	MatchedFindings int     `json:"matched_findings"`
	Precision       float64 `json:"precision"`
	Recall          float64 `json:"recall"`
	F1              float64 `json:"f1"`
	// BySeverity: recall by the golden comments' severity, precision by the
	// findings' severity.
	BySeverity []SeverityScore `json:"by_severity"`
	// CleanFindings counts the findings on clean cases, on
	// CleanCasesFlagged of them.
	CleanFindings     int `json:"clean_findings"`
	CleanCasesFlagged int `json:"clean_cases_flagged"`
	// FalsePositives counts the findings the verifier rejected;
	// FalsePositiveShare is their share of all findings, rejected ones
	// included (hallucinated anchors).
	FalsePositives     int     `json:"false_positives"`
	FalsePositiveShare float64 `json:"false_positive_share"`
	Duplicates         int     `json:"duplicates"`
	DuplicateRate      float64 `json:"duplicate_rate"`
	InputTokens        int     `json:"input_tokens"`
	OutputTokens       int     `json:"output_tokens"`
	Cost               float64 `json:"cost"`
	JudgeCost          float64 `json:"judge_cost"`
	// WallMS sums the cases' wall times; MeanWallMS is its mean.
	WallMS     int64           `json:"wall_ms"`
	MeanWallMS int64           `json:"mean_wall_ms"`
	Context    *ContextSummary `json:"context,omitempty"`
}

// SeverityScore is the figures of one severity.
type SeverityScore struct {
	Severity        string  `json:"severity"`
	Golden          int     `json:"golden"`
	MatchedGolden   int     `json:"matched_golden"`
	Recall          float64 `json:"recall"`
	Findings        int     `json:"findings"`
	MatchedFindings int     `json:"matched_findings"`
	Precision       float64 `json:"precision"`
}

// ContextSummary is the context recall of a whole evaluation: the share
// of the cases with context lines whose first prompt holds all of them.
type ContextSummary struct {
	Cases  int     `json:"cases"`
	Seen   int     `json:"seen"`
	Recall float64 `json:"recall"`
	// Overflows counts, over every case, the model reviewers whose prompt
	// did not fit the model's context: it must stay 0.
	Overflows int `json:"overflows"`
}

// Summarize adds up the case results.
func Summarize(results []CaseResult) Summary {
	var s Summary
	sev := map[string]*SeverityScore{}
	get := func(name string) *SeverityScore {
		name = cmp.Or(name, "unknown")
		if sev[name] == nil {
			sev[name] = &SeverityScore{Severity: name}
		}
		return sev[name]
	}
	for _, r := range results {
		s.Cases++
		if r.Error != "" {
			s.Errors++
			continue
		}
		s.addCase(r)
		for _, g := range r.Golden {
			e := get(g.Severity)
			e.Golden++
			if g.Matched {
				e.MatchedGolden++
			}
		}
		for _, f := range r.Findings {
			e := get(f.Severity)
			e.Findings++
			if f.Golden >= 0 {
				e.MatchedFindings++
			}
		}
	}
	s.Precision, s.Recall = ratio(s.MatchedFindings, s.Findings), ratio(s.MatchedGolden, s.Golden)
	s.F1 = f1(s.Precision, s.Recall)
	s.FalsePositiveShare = ratio(s.FalsePositives, s.Findings+s.FalsePositives)
	s.DuplicateRate = ratio(s.Duplicates, s.Findings)
	if n := s.Cases - s.Errors; n > 0 {
		s.MeanWallMS = s.WallMS / int64(n)
	}
	if s.Context != nil {
		s.Context.Recall = ratio(s.Context.Seen, s.Context.Cases)
	}
	s.BySeverity = severityOrder(sev)
	return s
}

// addCase adds one reviewed case's counts to s.
func (s *Summary) addCase(r CaseResult) {
	m := r.matched()
	s.Golden += len(r.Golden)
	s.MatchedGolden += m.golden
	s.Findings += len(r.Findings)
	s.MatchedFindings += m.findings
	if r.Clean {
		s.CleanCases++
		s.CleanFindings += len(r.Findings)
		if len(r.Findings) > 0 {
			s.CleanCasesFlagged++
		}
	}
	s.FalsePositives += r.FalsePositives
	s.Duplicates += r.Duplicates
	s.InputTokens += r.InputTokens
	s.OutputTokens += r.OutputTokens
	s.Cost += r.Cost
	s.JudgeCost += r.JudgeCost
	s.WallMS += r.WallMS
	if r.Context != nil && s.Context == nil {
		s.Context = &ContextSummary{}
	}
	if r.Context != nil {
		s.Context.Overflows += r.Context.Overflows
	}
	if r.Context != nil && r.Context.Known {
		s.Context.Cases++
		if r.Context.Seen {
			s.Context.Seen++
		}
	}
}

// severityOrder lists the severities most severe first, then others by
// name.
func severityOrder(m map[string]*SeverityScore) []SeverityScore {
	out := make([]SeverityScore, 0, len(m))
	for _, e := range m {
		e.Recall, e.Precision = ratio(e.MatchedGolden, e.Golden), ratio(e.MatchedFindings, e.Findings)
		out = append(out, *e)
	}
	slices.SortFunc(out, func(a, b SeverityScore) int {
		ra, rb := review.Severity(a.Severity).Rank(), review.Severity(b.Severity).Rank()
		return cmp.Or(cmp.Compare(rb, ra), cmp.Compare(a.Severity, b.Severity))
	})
	return out
}
