package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/server/store"
)

// PR is a pull request a test records as reviewed, and closed.
type PR struct {
	Repository string
	Number     int
	// RepositoryID is GitHub's id of the repository (0: unknown).
	RepositoryID int64
	// Model and Cost are the run's; Ledger the entries it leaves.
	Model  string
	Cost   float64
	Ledger []review.LedgerEntry
	// Arm and PromptVersion are the run's experiment arm and prompt
	// version ("" records none, as a run from before they were recorded).
	Arm, PromptVersion string
	// Took is the run's duration; 0 is since it was claimed.
	Took time.Duration
	// Merged and At are its closing's (Closed).
	Merged bool
	At     time.Time
}

// Reviewed records one succeeded run of the pull request that leaves
// pr.Ledger on its ledger, as a worker does. The database must hold no
// other queued run: the run is claimed as the next one.
func Reviewed(t testing.TB, st *store.Store, pr PR) {
	t.Helper()
	ctx := t.Context()
	run, err := st.EnqueueRun(ctx, store.NewRun{Mode: store.ModePR, Trigger: store.TriggerWebhook, InstallationID: 7,
		Repository: pr.Repository, RepositoryID: pr.RepositoryID, PRNumber: pr.Number, HeadSHA: "h1", BaseSHA: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := st.ClaimRun(ctx, "w", time.Minute); err != nil || got == nil || got.ID != run.ID {
		t.Fatalf("claimed %v (%v), want run %s", got, err, run.ID)
	}
	if err := st.FinishRun(ctx, run.ID, "w", store.Result{Status: store.StatusSucceeded, Model: pr.Model,
		Arm: pr.Arm, PromptVersion: pr.PromptVersion, Duration: pr.Took, Cost: review.CostInfo{TotalCost: pr.Cost}, Ledger: pr.Ledger, Scope: review.Scope{Kind: review.ScopeFull}}); err != nil {
		t.Fatal(err)
	}
}

// Closed records the pull request reviewed (Reviewed), then its closing,
// as the webhook intake does, in a delivery of its own.
func Closed(t testing.TB, st *store.Store, pr PR) {
	t.Helper()
	Reviewed(t, st, pr)
	d := store.Delivery{ID: fmt.Sprintf("%s#%d-close", pr.Repository, pr.Number), Event: "pull_request", Action: "closed", InstallationID: 7, Repository: pr.Repository}
	if _, err := st.ClosePullRequest(t.Context(), d, store.Closing{Number: pr.Number, Merged: pr.Merged, At: pr.At}); err != nil {
		t.Fatal(err)
	}
}
