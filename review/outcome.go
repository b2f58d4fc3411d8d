package review

import (
	"strings"
	"time"
)

// Outcome is what became of a finding MergeGuard posted on a pull request
// once the pull request closed (docs/quality.md). It is set once, by the
// first closing that finds the finding without one, and never changes.
type Outcome string

// Finding outcomes.
const (
	// OutcomeAddressed: fixed by a later push before the close (its cited
	// code gone from its lines, its file gone from the pull request, or a
	// secret removed from the diff).
	OutcomeAddressed Outcome = "addressed"
	// OutcomeDismissed: a person dismissed it (How says how).
	OutcomeDismissed Outcome = "dismissed"
	// OutcomeUnaddressed: still open when the pull request was merged.
	OutcomeUnaddressed Outcome = "unaddressed"
	// OutcomeAbandoned: still open when the pull request was closed
	// without being merged.
	OutcomeAbandoned Outcome = "abandoned"
)

// How an addressed finding was addressed (FindingOutcome.How), besides a
// secret's ExposedBlocking and ExposedWarning.
const (
	AddressedFixed    = "fixed"    // its cited code left its lines
	AddressedOutdated = "outdated" // its file left the pull request
)

// FindingOutcome is a finding's outcome and how it came about: for a
// dismissed finding the ledger's dismissal (DismissedThreadResolved, ...),
// for an addressed one AddressedFixed, AddressedOutdated or how a secret
// left the diff; "" for unaddressed and abandoned ones.
type FindingOutcome struct {
	Outcome Outcome `json:"outcome"`
	How     string  `json:"how,omitempty"`
}

// ClosedOutcome is a ledger entry's outcome as its pull request's closing
// recorded it: the outcome, whether that closing merged the pull request,
// the finding's source (FindingSource) and when it closed.
type ClosedOutcome struct {
	FindingOutcome
	Merged bool      `json:"merged"`
	Source string    `json:"source"`
	At     time.Time `json:"at"`
}

// OutcomeOf decides the outcome of ledger entry e when its pull request
// closes, merged or not. A finding fixed or dismissed before the close
// keeps that outcome either way; one still open is unaddressed when the
// pull request was merged and abandoned when it was not.
func OutcomeOf(e LedgerEntry, merged bool) FindingOutcome {
	switch e.State {
	case FindingFixed:
		return FindingOutcome{Outcome: OutcomeAddressed, How: AddressedFixed}
	case FindingOutdated:
		return FindingOutcome{Outcome: OutcomeAddressed, How: AddressedOutdated}
	case FindingExposed:
		return FindingOutcome{Outcome: OutcomeAddressed, How: e.StateHow}
	case FindingDismissed:
		return FindingOutcome{Outcome: OutcomeDismissed, How: e.StateHow}
	}
	if merged {
		return FindingOutcome{Outcome: OutcomeUnaddressed}
	}
	return FindingOutcome{Outcome: OutcomeAbandoned}
}

// SourceUnknownModel is the source of a model's finding whose run did not
// record its model.
const SourceUnknownModel = "model"

// maxSourceBytes bounds a source (a metric label, a report's key).
const maxSourceBytes = 100

// FindingSource names what reported f, for quality reports: the analyzer
// ("analyzer:secrets", ...) for an analyzer's finding, else the model of
// the run that first reported it and that run's reviewer prompt version,
// "model@prompt" ("gpt-4o@prompt-v1"; the model alone for a run that
// recorded no prompt version, before versions were recorded;
// SourceUnknownModel when the model is unknown).
func FindingSource(f Finding, model, prompt string) string {
	src := model
	switch {
	case strings.HasPrefix(f.Agent, "analyzer:"):
		src = f.Agent
	case model != "" && prompt != "":
		src = model + "@" + prompt
	}
	src = strings.ToValidUTF8(src, "")
	if len(src) > maxSourceBytes {
		src = strings.ToValidUTF8(src[:maxSourceBytes], "")
	}
	if src == "" {
		return SourceUnknownModel
	}
	return src
}
