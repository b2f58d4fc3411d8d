package report

import (
	"encoding/json"
	"io"
	"net/url"
	"strings"

	"github.com/mergeguard/mergeguard/review"
)

// SARIF constants: the schema GitHub code scanning validates against, and
// the partialFingerprints key MergeGuard's fingerprints are written under.
const (
	sarifSchema      = "https://json.schemastore.org/sarif-2.1.0.json"
	sarifVersion     = "2.1.0"
	sarifToolName    = "MergeGuard"
	sarifToolURI     = "https://github.com/mergeguard/mergeguard"
	sarifFingerprint = "mergeguard/v1"
)

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool        sarifTool         `json:"tool"`
	Invocations []sarifInvocation `json:"invocations"`
	Results     []sarifResult     `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	InformationURI string      `json:"informationUri"`
	Version        string      `json:"version,omitempty"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID               string       `json:"id"`
	Name             string       `json:"name"`
	ShortDescription sarifMessage `json:"shortDescription"`
	HelpURI          string       `json:"helpUri,omitempty"`
	Properties       sarifProps   `json:"properties"`
}

type sarifProps struct {
	Tags []string `json:"tags"`
}

type sarifMessage struct {
	Text string `json:"text"`
}

type sarifInvocation struct {
	ExecutionSuccessful        bool                `json:"executionSuccessful"`
	ToolExecutionNotifications []sarifNotification `json:"toolExecutionNotifications,omitempty"`
}

type sarifNotification struct {
	Level   string       `json:"level"`
	Message sarifMessage `json:"message"`
}

type sarifResult struct {
	RuleID              string            `json:"ruleId"`
	RuleIndex           int               `json:"ruleIndex"`
	Level               string            `json:"level"`
	Message             sarifMessage      `json:"message"`
	Locations           []sarifLocation   `json:"locations"`
	PartialFingerprints map[string]string `json:"partialFingerprints,omitempty"`
	Properties          sarifResultProps  `json:"properties"`
}

type sarifResultProps struct {
	Severity     review.Severity           `json:"severity"`
	Verification review.VerificationStatus `json:"verification_status,omitempty"`
	Confidence   float64                   `json:"confidence"`
	Agent        string                    `json:"agent,omitempty"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical `json:"physicalLocation"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           *sarifRegion  `json:"region,omitempty"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn,omitempty"`
	EndLine     int `json:"endLine"`
}

// SARIF writes v as a SARIF 2.1.0 log that GitHub code scanning accepts:
// one run of the tool "MergeGuard" (version toolVersion, omitted when
// empty) with one rule per check (see ruleOf: shellcheck/SC2086,
// gitleaks/aws-access-token, govet/printf, hadolint/DL3006, and one per
// category for the model's findings), each with its documentation, and one
// result per reported finding. The level is error for critical, warning for warning, note for
// info and style. A result's location is the repository-relative path,
// percent-encoded as a URI reference, with the cited lines as its region;
// a finding on removed lines or on a whole file has no region. The
// finding's fingerprint is the partial fingerprint "mergeguard/v1". The
// invocation is unsuccessful when the review was degraded, and the
// verdict's notes are its notifications.
func SARIF(w io.Writer, v review.Verdict, toolVersion string) error {
	rules, index := sarifRules(v.Findings())
	run := sarifRun{
		Tool:        sarifTool{Driver: sarifDriver{Name: sarifToolName, InformationURI: sarifToolURI, Version: toolVersion, Rules: rules}},
		Invocations: []sarifInvocation{{ExecutionSuccessful: !v.Degraded}},
		Results:     []sarifResult{},
	}
	for _, n := range v.Notes {
		run.Invocations[0].ToolExecutionNotifications = append(run.Invocations[0].ToolExecutionNotifications,
			sarifNotification{Level: "note", Message: sarifMessage{Text: n}})
	}
	for _, f := range v.Findings() {
		id := ruleOf(f).id
		res := sarifResult{
			RuleID: id, RuleIndex: index[id], Level: sarifLevel(f.Severity),
			Message:    sarifMessage{Text: message(f, false)},
			Locations:  []sarifLocation{{PhysicalLocation: sarifPhysical{ArtifactLocation: sarifArtifact{URI: uriOf(f.FilePath)}}}},
			Properties: sarifResultProps{Severity: severityName(f.Severity), Verification: f.VerificationStatus, Confidence: f.Confidence, Agent: f.Agent},
		}
		if start, end, ok := headLines(f); ok {
			res.Locations[0].PhysicalLocation.Region = &sarifRegion{StartLine: start, StartColumn: f.Column, EndLine: end}
		}
		if f.Fingerprint != "" {
			res.PartialFingerprints = map[string]string{sarifFingerprint: f.Fingerprint}
		}
		run.Results = append(run.Results, res)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(sarifLog{Schema: sarifSchema, Version: sarifVersion, Runs: []sarifRun{run}})
}

// sarifRules returns the rules: one for each category (the model's
// findings), the known ones first, then one for each other rule the
// findings use, in their order; and each rule's index.
func sarifRules(findings []review.Finding) ([]sarifRule, map[string]int) {
	var all []rule
	for _, c := range review.Categories {
		all = append(all, categoryRule(c))
	}
	for _, f := range findings {
		all = append(all, ruleOf(f))
	}
	index := map[string]int{}
	var rules []sarifRule
	for _, r := range all {
		if _, ok := index[r.id]; ok {
			continue
		}
		index[r.id] = len(rules)
		rules = append(rules, sarifRule{ID: r.id, Name: r.name, ShortDescription: sarifMessage{Text: r.description},
			HelpURI: r.helpURI, Properties: sarifProps{Tags: []string{r.tag}}})
	}
	return rules, index
}

// sarifLevel maps a severity to a SARIF level.
func sarifLevel(s review.Severity) string {
	switch s {
	case review.SeverityCritical:
		return "error"
	case review.SeverityWarning:
		return "warning"
	}
	return "note"
}

// uriOf percent-encodes each segment of a repository-relative path, so a
// name with spaces, '#', '?', ':' or '%' stays one relative URI reference.
func uriOf(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		// ':' too, or a first segment "c:x" would read as a scheme.
		segs[i] = strings.ReplaceAll(url.PathEscape(s), ":", "%3A")
	}
	return strings.Join(segs, "/")
}
