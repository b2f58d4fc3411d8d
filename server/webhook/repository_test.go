package webhook_test

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/github/githubtest"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/server/store"
)

// TestRepositoryRenamedMovesLearnings: a repository renamed or
// transferred on GitHub keeps its id; the learnings kept under its old
// name take the new one unless another repository's runs (or runs without
// an id) were kept under that name too. Runs keep their name (with their
// pull requests' ledgers). Other actions change nothing.
func TestRepositoryRenamedMovesLearnings(t *testing.T) {
	t.Parallel()
	const (
		id   = 186853002 // the payloads' repository.id
		name = "Codertocat/Hello-World"
	)
	tests := []struct {
		file        string
		shared      bool // another repository's run is kept under the old name
		outcome     string
		runs        []string // names of the runs, id's first: unchanged
		learnedName string
	}{
		{file: "renamed.payload.json", outcome: "applied",
			runs: []string{name, name}, learnedName: "Codertocat/Hello-World-old"},
		{file: "transferred.payload.json", outcome: "applied",
			runs: []string{name, name}, learnedName: "octo-org/Hello-World"},
		{file: "renamed.payload.json", shared: true, outcome: "applied",
			runs: []string{name, name, name}, learnedName: name},
		{file: "edited.payload.json", outcome: "ignored", runs: []string{name, name}, learnedName: name},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			in := newIntake(t)
			ctx := t.Context()
			for _, n := range []int{1, 2} {
				if _, err := in.store.EnqueueRun(ctx, store.NewRun{Mode: store.ModePR, Trigger: store.TriggerWebhook, InstallationID: 1,
					Repository: name, RepositoryID: id, PRNumber: n, HeadSHA: "h"}); err != nil {
					t.Fatal(err)
				}
			}
			if tt.shared {
				if _, err := in.store.EnqueueRun(ctx, store.NewRun{Mode: store.ModePR, Trigger: store.TriggerWebhook, InstallationID: 1,
					Repository: name, RepositoryID: 7, PRNumber: 9, HeadSHA: "h"}); err != nil {
					t.Fatal(err)
				}
			}
			l, err := in.store.AddLearning(ctx, review.Learning{Repository: name, Instruction: "use the logger",
				Path: "cmd/**", Status: review.LearningActive, Author: "alice"})
			if err != nil {
				t.Fatal(err)
			}
			payload := githubtest.Payload(t, "repository/"+tt.file)
			if got := in.send(githubtest.Delivery{Event: "repository", ID: "r-1", Payload: payload}); got != http.StatusOK {
				t.Fatalf("status %d, want 200", got)
			}
			if got := in.delivery("r-1").Outcome; got != tt.outcome {
				t.Errorf("outcome %q, want %q", got, tt.outcome)
			}
			var runs []string
			rows, err := in.raw.Query(ctx, `SELECT repository FROM review_runs ORDER BY repo_id DESC, pr_number`)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var r string
				if err := rows.Scan(&r); err != nil {
					t.Fatal(err)
				}
				runs = append(runs, r)
			}
			if diff := cmp.Diff(tt.runs, runs); diff != "" {
				t.Errorf("runs' names (-want +got):\n%s", diff)
			}
			var learned string
			if err := in.raw.QueryRow(ctx, `SELECT repository FROM learnings WHERE id = $1`, l.ID).Scan(&learned); err != nil {
				t.Fatal(err)
			}
			if learned != tt.learnedName {
				t.Errorf("the learning is under %s, want %s", learned, tt.learnedName)
			}
			// A redelivery changes nothing more.
			if got := in.send(githubtest.Delivery{Event: "repository", ID: "r-1", Payload: payload}); got != http.StatusOK {
				t.Errorf("redelivery: status %d, want 200", got)
			}
		})
	}
}
