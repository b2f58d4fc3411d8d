package review_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/review"
)

func TestOutcomeOf(t *testing.T) {
	t.Parallel()
	entry := func(state review.FindingState, how string) review.LedgerEntry {
		return review.LedgerEntry{State: state, StateHow: how}
	}
	tests := []struct {
		name   string
		entry  review.LedgerEntry
		merged bool
		want   review.FindingOutcome
	}{
		{"fixed, merged", entry(review.FindingFixed, ""), true, review.FindingOutcome{Outcome: review.OutcomeAddressed, How: review.AddressedFixed}},
		{"fixed, closed unmerged", entry(review.FindingFixed, ""), false, review.FindingOutcome{Outcome: review.OutcomeAddressed, How: review.AddressedFixed}},
		{"file left the pull request", entry(review.FindingOutdated, ""), true, review.FindingOutcome{Outcome: review.OutcomeAddressed, How: review.AddressedOutdated}},
		{"secret removed", entry(review.FindingExposed, review.ExposedBlocking), true, review.FindingOutcome{Outcome: review.OutcomeAddressed, How: review.ExposedBlocking}},
		{"secret removed, warn", entry(review.FindingExposed, review.ExposedWarning), false, review.FindingOutcome{Outcome: review.OutcomeAddressed, How: review.ExposedWarning}},
		{"thread resolved", entry(review.FindingDismissed, review.DismissedThreadResolved), true, review.FindingOutcome{Outcome: review.OutcomeDismissed, How: review.DismissedThreadResolved}},
		{"command", entry(review.FindingDismissed, review.DismissedCommand), true, review.FindingOutcome{Outcome: review.OutcomeDismissed, How: review.DismissedCommand}},
		{"feedback", entry(review.FindingDismissed, review.DismissedFeedback), false, review.FindingOutcome{Outcome: review.OutcomeDismissed, How: review.DismissedFeedback}},
		{"api", entry(review.FindingDismissed, review.DismissedAPI), true, review.FindingOutcome{Outcome: review.OutcomeDismissed, How: review.DismissedAPI}},
		{"open, merged", entry(review.FindingOpen, ""), true, review.FindingOutcome{Outcome: review.OutcomeUnaddressed}},
		{"open, closed unmerged", entry(review.FindingOpen, ""), false, review.FindingOutcome{Outcome: review.OutcomeAbandoned}},
		{"unknown state, merged", entry("weird", ""), true, review.FindingOutcome{Outcome: review.OutcomeUnaddressed}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, review.OutcomeOf(tt.entry, tt.merged)); diff != "" {
				t.Errorf("OutcomeOf (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFindingSource(t *testing.T) {
	t.Parallel()
	tests := []struct {
		agent, model, prompt, want string
	}{
		{"analyzer:secrets", "gpt-4o", "prompt-v1", "analyzer:secrets"},
		{"analyzer:shellcheck", "", "", "analyzer:shellcheck"},
		{"security", "qwen2.5-coder:32b", "", "qwen2.5-coder:32b"},
		{"security", "qwen2.5-coder:32b", "focused-v1", "qwen2.5-coder:32b@focused-v1"},
		{"", "gpt-4o", "", "gpt-4o"}, // a run from before prompt versions were recorded
		{"", "gpt-4o", "prompt-v1", "gpt-4o@prompt-v1"},
		{"bugs", "", "", review.SourceUnknownModel},
		{"bugs", "", "prompt-v1", review.SourceUnknownModel},
		{"bugs", strings.Repeat("m", 95), "prompt-v1", strings.Repeat("m", 95) + "@prom"},
	}
	for _, tt := range tests {
		if got := review.FindingSource(review.Finding{Agent: tt.agent}, tt.model, tt.prompt); got != tt.want {
			t.Errorf("FindingSource(agent %q, model %q, prompt %q) = %q, want %q", tt.agent, tt.model, tt.prompt, got, tt.want)
		}
	}
}
