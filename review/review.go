// Package review holds MergeGuard's domain model — findings, verdicts, agent
// results, pipeline events — and the interfaces the review pipeline is handed:
// a Source to read the change from and a Sink to report progress to.
//
// The package and its sub-packages are pure: they never import github/,
// server/ or the store. The pipeline itself lives in review/pipeline.
package review

import (
	"fmt"
	"strings"
)

// Severity ranks how much a finding matters.
type Severity string

// Severities, from most to least important.
const (
	SeverityCritical Severity = "critical"
	SeverityWarning  Severity = "warning"
	SeverityInfo     Severity = "info"
	SeverityStyle    Severity = "style"
)

// Severities lists every severity, most important first.
var Severities = []Severity{SeverityCritical, SeverityWarning, SeverityInfo, SeverityStyle}

// Rank orders severities: critical 4, warning 3, info 2, style 1, unknown 0.
func (s Severity) Rank() int {
	switch s {
	case SeverityCritical:
		return 4
	case SeverityWarning:
		return 3
	case SeverityInfo:
		return 2
	case SeverityStyle:
		return 1
	}
	return 0
}

// AtLeast reports whether s is at least as severe as min.
func (s Severity) AtLeast(min Severity) bool { return s.Rank() >= min.Rank() }

// ParseSeverity accepts a severity name in any case.
func ParseSeverity(v string) (Severity, error) {
	s := Severity(strings.ToLower(strings.TrimSpace(v)))
	if s.Rank() == 0 {
		return "", fmt.Errorf("unknown severity %q (want critical, warning, info or style)", v)
	}
	return s, nil
}

// Category says what kind of problem a finding is.
type Category string

// Categories of findings.
const (
	CategorySecurity    Category = "security"
	CategoryBug         Category = "bug"
	CategoryPerformance Category = "performance"
	CategoryQuality     Category = "quality"
)

// Categories lists every category.
var Categories = []Category{CategorySecurity, CategoryBug, CategoryPerformance, CategoryQuality}

// ParseCategory accepts a category name in any case.
func ParseCategory(v string) (Category, error) {
	c := Category(strings.ToLower(strings.TrimSpace(v)))
	for _, k := range Categories {
		if c == k {
			return c, nil
		}
	}
	return "", fmt.Errorf("unknown category %q (want security, bug, performance or quality)", v)
}

// Side is the side of a diff a line belongs to, as GitHub names it.
type Side string

// Sides of a diff.
const (
	SideLeft  Side = "LEFT"  // the base (deleted or context lines, old numbering)
	SideRight Side = "RIGHT" // the head (added or context lines, new numbering)
)

// VerificationStatus is the verifier's judgement of a finding.
type VerificationStatus string

// Verification statuses.
const (
	Verified      VerificationStatus = "verified"
	Likely        VerificationStatus = "likely"
	Unverified    VerificationStatus = "unverified"
	FalsePositive VerificationStatus = "false_positive"
)

// Rank orders verification statuses, best first: verified 3, likely 2,
// unverified 1, false_positive and unknown 0.
func (s VerificationStatus) Rank() int {
	switch s {
	case Verified:
		return 3
	case Likely:
		return 2
	case Unverified:
		return 1
	}
	return 0
}

// Finding is one problem reported on a change.
type Finding struct {
	FilePath           string             `json:"file_path"`
	LineStart          int                `json:"line_start"`
	LineEnd            int                `json:"line_end"`
	Side               Side               `json:"side"`
	Severity           Severity           `json:"severity"`
	Category           Category           `json:"category"`
	Title              string             `json:"title"`
	Description        string             `json:"description"`
	Suggestion         string             `json:"suggestion,omitempty"`
	VerificationStatus VerificationStatus `json:"verification_status"`
	Confidence         float64            `json:"confidence"`
	CodeSnippet        string             `json:"code_snippet,omitempty"`
	// Agent names the agent that reported the finding; a built-in
	// analyzer's and a linter's start with AnalyzerPrefix.
	Agent string `json:"agent,omitempty"`
	// Rule is the check that reported the finding, in its tool's own
	// terms (SC2086, DL3006, printf, aws-access-token, an actionlint
	// rule); "" for the model's findings and single-check analyzers. Only
	// MergeGuard's analyzers and linters set it.
	Rule string `json:"rule,omitempty"`
	// Column is the 1-based column of LineStart where the finding starts,
	// 0 when its tool does not say.
	Column int `json:"column,omitempty"`
	// Fingerprint identifies the finding across runs: it is derived from the
	// path, the anchored code and the category, never from the model's words.
	Fingerprint string `json:"fingerprint,omitempty"`
	// Reason says why the verifier judged the finding as it did.
	Reason string `json:"reason,omitempty"`
	// SuggestionNote, when set, says why the suggestion is not posted as a
	// suggestion to apply (docs/quality.md, Suggestions that apply): it is
	// shown as a plain code block with this note. The verifier sets it; it
	// is not stored.
	SuggestionNote string `json:"suggestion_note,omitempty"`
}

// IsSecretDetector reports whether agent names one of the secret
// detectors (the analyzers that find committed credentials).
func IsSecretDetector(agent string) bool {
	return agent == "analyzer:secrets" || agent == "analyzer:private-keys"
}

// NeedsExplicitDismissal reports whether only an explicit act of a writer
// (a command, the UI or API, a 👎) may dismiss f, never a model's reading of
// what someone wrote, nor a learning: a committed secret is leaked whatever
// anyone says of it, and a critical finding is too costly to lose to a
// misread reply or a planted text.
func (f Finding) NeedsExplicitDismissal() bool {
	return IsSecretDetector(f.Agent) || f.Severity == SeverityCritical
}

// Decision is the review's verdict.
type Decision string

// Decisions.
const (
	DecisionApprove        Decision = "approve"
	DecisionRequestChanges Decision = "request_changes"
	DecisionComment        Decision = "comment"
)

// FileReview is the part of a verdict about one file.
type FileReview struct {
	FilePath      string    `json:"file_path"`
	Language      string    `json:"language"`
	ChangeType    string    `json:"change_type"`
	Findings      []Finding `json:"findings"`
	PositiveNotes []string  `json:"positive_notes"`
}

// Stats counts what a review looked at and found.
type Stats struct {
	FilesChanged  int `json:"files_changed"`
	FilesReviewed int `json:"files_reviewed"`
	FilesSkipped  int `json:"files_skipped"`
	Additions     int `json:"additions"`
	Deletions     int `json:"deletions"`
	Chunks        int `json:"chunks"`
	FindingsTotal int `json:"findings_total"`
	Critical      int `json:"critical"`
	Warning       int `json:"warning"`
	Info          int `json:"info"`
	Style         int `json:"style"`
	LLMCalls      int `json:"llm_calls"`
	ToolCalls     int `json:"tool_calls"`
	InputTokens   int `json:"input_tokens"`
	OutputTokens  int `json:"output_tokens"`
	// TotalCost is in US dollars, from the configured price table.
	TotalCost float64 `json:"total_cost"`
	// SuggestionsApplied and SuggestionsRejected count the reported
	// findings' suggestions that apply to the file at the head (posted as
	// suggestion blocks where the comment is inline) and those that do not
	// (posted as plain code with the reason): docs/quality.md,
	// Suggestions that apply.
	SuggestionsApplied  int `json:"suggestions_applied,omitempty"`
	SuggestionsRejected int `json:"suggestions_rejected,omitempty"`
}

// What became of a finding's suggestion (Stats.SuggestionsApplied and
// SuggestionsRejected), the values of mergeguard_suggestions_total's
// result label.
const (
	// SuggestionApplied: the suggestion applies and is posted as a
	// suggestion block.
	SuggestionApplied = "applied"
	// SuggestionRejected: a check failed; the suggestion is posted as a
	// plain code block with the reason.
	SuggestionRejected = "rejected"
)

// AnalyzerPrefix starts the agent name of every deterministic agent: the
// built-in analyzers and the linters ("analyzer:secrets",
// "analyzer:shellcheck"). Their findings are analyzers' findings to the
// verifier, the report and the pages.
const AnalyzerPrefix = "analyzer:"

// SkippedFile is a changed file the planner did not send to review.
type SkippedFile struct {
	FilePath string `json:"file_path"`
	Reason   string `json:"reason"`
}

// Truncation describes what the context budget cut from the prompts.
type Truncation struct {
	Truncated        bool     `json:"truncated"`
	OriginalLines    int      `json:"original_lines"`
	KeptLines        int      `json:"kept_lines"`
	SectionsAffected []string `json:"sections_affected"`
}

// Verdict is the result of a review: the ReviewVerdict JSON contract of the
// API (docs/architecture.md). Fields after ReviewDurationMS are additions.
type Verdict struct {
	Verdict          Decision     `json:"verdict"`
	Summary          string       `json:"summary"`
	Confidence       float64      `json:"confidence"`
	Files            []FileReview `json:"files"`
	Stats            Stats        `json:"stats"`
	FalsePositives   []Finding    `json:"false_positives"`
	Recommendations  []string     `json:"recommendations"`
	ReviewDurationMS int64        `json:"review_duration_ms"`

	Skipped    []SkippedFile `json:"skipped,omitempty"`
	Truncation *Truncation   `json:"truncation,omitempty"`
	Agents     []AgentResult `json:"agents,omitempty"`
	// Degraded is set when an agent failed and the review is partial.
	Degraded bool `json:"degraded,omitempty"`
	// Notes carries plain statements for the reader, such as
	// "no LLM configured: built-in analyzers only".
	Notes []string `json:"notes,omitempty"`
	// Walkthrough summarises the change and groups its files by purpose.
	Walkthrough *Walkthrough `json:"walkthrough,omitempty"`
}

// Findings returns every reported finding of the verdict, file by file.
func (v *Verdict) Findings() []Finding {
	var out []Finding
	for _, f := range v.Files {
		out = append(out, f.Findings...)
	}
	return out
}

// AgentStatus tells how an agent run ended.
type AgentStatus string

// Agent statuses.
const (
	AgentSuccess   AgentStatus = "success"
	AgentTruncated AgentStatus = "truncated" // max turns reached; partial issues
	AgentError     AgentStatus = "error"
	AgentTimeout   AgentStatus = "timeout"
)

// CostInfo is the token usage and price of some LLM work.
type CostInfo struct {
	InputTokens  int     `json:"input_tokens"`
	OutputTokens int     `json:"output_tokens"`
	TotalCost    float64 `json:"total_cost"`
}

// Add returns the sum of two costs.
func (c CostInfo) Add(o CostInfo) CostInfo {
	return CostInfo{
		InputTokens:  c.InputTokens + o.InputTokens,
		OutputTokens: c.OutputTokens + o.OutputTokens,
		TotalCost:    c.TotalCost + o.TotalCost,
	}
}

// AgentResult is the outcome of one agent run.
type AgentResult struct {
	Agent     string      `json:"agent"`
	Stage     string      `json:"stage"`
	Status    AgentStatus `json:"status"`
	Issues    int         `json:"issues"`
	ElapsedMS int64       `json:"elapsed_ms"`
	Turns     int         `json:"turns"`
	Cost      CostInfo    `json:"cost"`
	// Error and ErrorType are set when Status is error.
	Error     string `json:"error,omitempty"`
	ErrorType string `json:"error_type,omitempty"`
	// TimeoutSeconds is set when Status is timeout.
	TimeoutSeconds float64 `json:"timeout_seconds,omitempty"`
}
