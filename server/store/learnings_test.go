package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/server/store"
)

var learningTimes = cmpopts.IgnoreFields(review.Learning{}, "ID", "CreatedAt", "UpdatedAt")

func addLearning(t *testing.T, s *store.Store, l review.Learning) review.Learning {
	t.Helper()
	got, err := s.AddLearning(t.Context(), l)
	if err != nil {
		t.Fatalf("AddLearning(%q): %v", l.Instruction, err)
	}
	return got
}

// TestAddLearning: what is stored comes back, with the author as the last
// to change it; the schema refuses what a learning cannot be.
func TestAddLearning(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	run := enqueue(t, s, prRun("o/r", 4, "h1"))
	tests := []struct {
		name    string
		in      review.Learning
		want    review.Learning
		wantErr string // constraint
	}{
		{
			name: "with provenance",
			in: review.Learning{Repository: "o/r", Instruction: "panics are fine in cmd/", Path: "cmd/**",
				Status: review.LearningProposed, PRNumber: 4, ThreadCommentID: 501, Fingerprint: "fp-a", Author: "alice", RunID: run.ID},
			want: review.Learning{Repository: "o/r", Instruction: "panics are fine in cmd/", Path: "cmd/**",
				Status: review.LearningProposed, PRNumber: 4, ThreadCommentID: 501, Fingerprint: "fp-a", Author: "alice",
				RunID: run.ID, UpdatedBy: "alice"},
		},
		{
			name: "from the API, no provenance, a malformed run id ignored",
			in:   review.Learning{Repository: "o/r", Instruction: "x", Status: review.LearningActive, Author: "api", RunID: "nope"},
			want: review.Learning{Repository: "o/r", Instruction: "x", Status: review.LearningActive, Author: "api", UpdatedBy: "api"},
		},
		{name: "empty instruction", in: review.Learning{Repository: "o/r", Status: review.LearningActive, Author: "a"},
			wantErr: "learnings_instruction_check"},
		{name: "unknown status", in: review.Learning{Repository: "o/r", Instruction: "x", Status: "maybe", Author: "a"},
			wantErr: "learnings_status_check"},
		{name: "not owner/name", in: review.Learning{Repository: "r", Instruction: "x", Status: review.LearningActive, Author: "a"},
			wantErr: "learnings_repository_check"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.AddLearning(t.Context(), tt.in)
			if tt.wantErr != "" {
				if c := constraintOf(err); c != tt.wantErr {
					t.Fatalf("AddLearning = %v, want a violation of %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, learningTimes); diff != "" {
				t.Errorf("AddLearning (-want +got):\n%s", diff)
			}
			if got.ID == 0 || got.CreatedAt.IsZero() || got.UpdatedAt.IsZero() {
				t.Errorf("AddLearning = id %d, created %v, updated %v; want them set", got.ID, got.CreatedAt, got.UpdatedAt)
			}
			again, err := s.Learning(t.Context(), "o/r", got.ID)
			if err != nil || !cmp.Equal(got, again) {
				t.Errorf("Learning(%d) = %+v, %v; want %+v", got.ID, again, err, got)
			}
		})
	}
}

// TestLearnings: a repository's learnings by status, oldest first, its
// name compared case-insensitively; other repositories' are not listed.
func TestLearnings(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	a := addLearning(t, s, review.Learning{Repository: "Org/Repo", Instruction: "a", Status: review.LearningActive, Author: "x"})
	b := addLearning(t, s, review.Learning{Repository: "org/repo", Instruction: "b", Status: review.LearningProposed, Author: "x"})
	c := addLearning(t, s, review.Learning{Repository: "org/repo", Instruction: "c", Status: review.LearningActive, Author: "x"})
	addLearning(t, s, review.Learning{Repository: "org/other", Instruction: "d", Status: review.LearningActive, Author: "x"})
	tests := []struct {
		repo   string
		status review.LearningStatus
		want   []int64
	}{
		{"org/repo", "", []int64{a.ID, b.ID, c.ID}},
		{"ORG/REPO", review.LearningActive, []int64{a.ID, c.ID}},
		{"Org/Repo", review.LearningProposed, []int64{b.ID}},
		{"org/repo", review.LearningInactive, nil},
		{"org/none", "", nil},
	}
	for _, tt := range tests {
		got, err := s.Learnings(t.Context(), tt.repo, tt.status)
		if err != nil {
			t.Fatalf("Learnings(%s, %q): %v", tt.repo, tt.status, err)
		}
		var ids []int64
		for _, l := range got {
			ids = append(ids, l.ID)
		}
		if diff := cmp.Diff(tt.want, ids); diff != "" {
			t.Errorf("Learnings(%s, %q) ids (-want +got):\n%s", tt.repo, tt.status, diff)
		}
	}
	if _, err := s.Learning(t.Context(), "ORG/repo", a.ID); err != nil {
		t.Errorf("Learning in another case: %v", err)
	}
	if _, err := s.Learning(t.Context(), "org/other", a.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Learning of another repository = %v, want ErrNotFound", err)
	}
	if _, err := s.Learning(t.Context(), "org/repo", 999999); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Learning(unknown id) = %v, want ErrNotFound", err)
	}
}

func ptr[T any](v T) *T { return &v }

// TestUpdateLearning: each field changes alone, nil fields are kept, the
// change is attributed and dated.
func TestUpdateLearning(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	l := addLearning(t, s, review.Learning{Repository: "o/r", Instruction: "old", Path: "a/**",
		Status: review.LearningProposed, Author: "alice"})
	tests := []struct {
		name   string
		update store.LearningUpdate
		change func(*review.Learning)
	}{
		{"instruction", store.LearningUpdate{Instruction: ptr("new"), By: "bob"},
			func(l *review.Learning) { l.Instruction, l.UpdatedBy = "new", "bob" }},
		{"path", store.LearningUpdate{Path: ptr("b/*.go"), By: "carol"},
			func(l *review.Learning) { l.Path, l.UpdatedBy = "b/*.go", "carol" }},
		{"path cleared", store.LearningUpdate{Path: ptr(""), By: "carol"},
			func(l *review.Learning) { l.Path = "" }},
		{"status", store.LearningUpdate{Status: ptr(review.LearningActive), By: "web:dave"},
			func(l *review.Learning) { l.Status, l.UpdatedBy = review.LearningActive, "web:dave" }},
		{"nothing but who", store.LearningUpdate{By: "erin"},
			func(l *review.Learning) { l.UpdatedBy = "erin" }},
		{"all", store.LearningUpdate{Instruction: ptr("all"), Path: ptr("**/*.sql"), Status: ptr(review.LearningInactive), By: "api"},
			func(l *review.Learning) {
				l.Instruction, l.Path, l.Status, l.UpdatedBy = "all", "**/*.sql", review.LearningInactive, "api"
			}},
	}
	want := l
	for _, tt := range tests {
		before := want.UpdatedAt
		time.Sleep(time.Millisecond)
		got, err := s.UpdateLearning(t.Context(), "O/R", l.ID, tt.update)
		if err != nil {
			t.Fatalf("%s: UpdateLearning: %v", tt.name, err)
		}
		tt.change(&want)
		if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(review.Learning{}, "UpdatedAt")); diff != "" {
			t.Errorf("%s: UpdateLearning (-want +got):\n%s", tt.name, diff)
		}
		if !got.UpdatedAt.After(before) {
			t.Errorf("%s: updated at %v, not after %v", tt.name, got.UpdatedAt, before)
		}
		want.UpdatedAt = got.UpdatedAt
	}
	if _, err := s.UpdateLearning(t.Context(), "o/other", l.ID, store.LearningUpdate{By: "x"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("UpdateLearning of another repository = %v, want ErrNotFound", err)
	}
	if _, err := s.UpdateLearning(t.Context(), "o/r", l.ID+1000, store.LearningUpdate{By: "x"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("UpdateLearning(unknown id) = %v, want ErrNotFound", err)
	}
	if _, err := s.UpdateLearning(t.Context(), "o/r", l.ID, store.LearningUpdate{Status: ptr(review.LearningStatus("x"))}); err == nil {
		t.Error("UpdateLearning to an unknown status succeeded")
	}
}

// TestDeleteLearning: gone once; another repository's is not deleted.
func TestDeleteLearning(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	l := addLearning(t, s, review.Learning{Repository: "o/r", Instruction: "x", Status: review.LearningActive, Author: "a"})
	if err := s.DeleteLearning(t.Context(), "o/other", l.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("DeleteLearning of another repository = %v, want ErrNotFound", err)
	}
	if err := s.DeleteLearning(t.Context(), "O/r", l.ID); err != nil {
		t.Fatalf("DeleteLearning: %v", err)
	}
	if _, err := s.Learning(t.Context(), "o/r", l.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Learning after delete = %v, want ErrNotFound", err)
	}
	if err := s.DeleteLearning(t.Context(), "o/r", l.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("DeleteLearning twice = %v, want ErrNotFound", err)
	}
}

// TestActivateThreadLearning: /mergeguard learn activates the thread's
// newest proposed learning, and only a proposed one.
func TestActivateThreadLearning(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	thread := func(n int, comment int64, instruction string, status review.LearningStatus) review.Learning {
		return addLearning(t, s, review.Learning{Repository: "o/r", Instruction: instruction, Status: status,
			PRNumber: n, ThreadCommentID: comment, Author: "alice"})
	}
	thread(1, 501, "older", review.LearningProposed)
	newer := thread(1, 501, "newer", review.LearningProposed)
	thread(1, 502, "already active", review.LearningActive)
	thread(2, 501, "other pull request", review.LearningProposed)

	got, err := s.ActivateThreadLearning(t.Context(), "o/r", 1, 501, "bob")
	if err != nil {
		t.Fatalf("ActivateThreadLearning: %v", err)
	}
	want := newer
	want.Status, want.UpdatedBy = review.LearningActive, "bob"
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(review.Learning{}, "UpdatedAt")); diff != "" {
		t.Errorf("ActivateThreadLearning (-want +got):\n%s", diff)
	}
	proposed, err := s.Learnings(t.Context(), "o/r", review.LearningProposed)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, l := range proposed {
		left = append(left, l.Instruction)
	}
	if diff := cmp.Diff([]string{"older", "other pull request"}, left); diff != "" {
		t.Errorf("proposed after activation (-want +got):\n%s", diff)
	}

	for _, tt := range []struct {
		name    string
		repo    string
		n       int
		comment int64
	}{
		{"a thread with an active learning only", "o/r", 1, 502},
		{"a thread without learnings", "o/r", 1, 999},
		{"another repository", "o/x", 1, 501},
	} {
		if _, err := s.ActivateThreadLearning(t.Context(), tt.repo, tt.n, tt.comment, "bob"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: ActivateThreadLearning = %v, want ErrNotFound", tt.name, err)
		}
	}
}

// TestFindingOfThread: the entry posted as the thread's first comment.
func TestFindingOfThread(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	a := entry("fp-a", "a.go", 10, review.SeverityCritical, review.FindingOpen, "h1")
	a.CommentID = 501
	b := entry("fp-b", "b.go", 3, review.SeverityWarning, review.FindingOpen, "h1")
	finishWithLedger(t, s, "h1", []review.LedgerEntry{a, b})

	got, err := s.FindingOfThread(t.Context(), "o/r", 1, 501)
	if err != nil || got.Finding.Fingerprint != "fp-a" {
		t.Errorf("FindingOfThread(501) = %s, %v; want fp-a", got.Finding.Fingerprint, err)
	}
	for _, tt := range []struct {
		name    string
		n       int
		comment int64
	}{
		{"unknown comment", 1, 999},
		{"another pull request", 2, 501},
		{"an entry never posted", 1, 0},
	} {
		if got, err := s.FindingOfThread(t.Context(), "o/r", tt.n, tt.comment); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: FindingOfThread = %s, %v; want ErrNotFound", tt.name, got.Finding.Fingerprint, err)
		}
	}
}

// TestDismissFinding: only open entries are dismissed, by whom and how;
// unknown ways are refused.
func TestDismissFinding(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	open := entry("fp-open", "a.go", 1, review.SeverityCritical, review.FindingOpen, "h1")
	fixed := entry("fp-fixed", "a.go", 5, review.SeverityWarning, review.FindingFixed, "h1")
	fixed.FixedSHA = "h1"
	outdated := entry("fp-outdated", "b.go", 2, review.SeverityWarning, review.FindingOutdated, "h1")
	exposed := entry("fp-exposed", "c.go", 3, review.SeverityCritical, review.FindingExposed, "h1")
	exposed.StateBy, exposed.StateHow = "mergeguard", review.ExposedBlocking
	finishWithLedger(t, s, "h1", []review.LedgerEntry{open, fixed, outdated, exposed})

	tests := []struct {
		name    string
		fp, how string
		want    bool
		wantErr bool
	}{
		{name: "an unknown way", fp: "fp-open", how: "vibes", wantErr: true},
		{name: "an exposed secret by a resolved thread", fp: "fp-exposed", how: review.DismissedThreadResolved},
		{name: "an exposed secret by a command", fp: "fp-exposed", how: review.DismissedCommand, want: true},
		{name: "open by feedback", fp: "fp-open", how: review.DismissedFeedback, want: true},
		{name: "already dismissed", fp: "fp-open", how: review.DismissedCommand},
		{name: "fixed", fp: "fp-fixed", how: review.DismissedCommand},
		{name: "outdated", fp: "fp-outdated", how: review.DismissedCommand},
		{name: "unknown", fp: "fp-none", how: review.DismissedCommand},
	}
	for _, tt := range tests {
		got, err := s.DismissFinding(t.Context(), "o/r", 1, tt.fp, "alice", tt.how)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("%s: DismissFinding = %t, %v; want %t (error %t)", tt.name, got, err, tt.want, tt.wantErr)
		}
	}
	states := map[string]string{}
	for _, e := range ledger(t, s) {
		states[e.Finding.Fingerprint] = string(e.State) + " " + e.StateBy + " " + e.StateHow
	}
	want := map[string]string{
		"fp-open":     "dismissed alice feedback",
		"fp-fixed":    "fixed  ",
		"fp-outdated": "outdated  ",
		"fp-exposed":  "dismissed alice command",
	}
	if diff := cmp.Diff(want, states); diff != "" {
		t.Errorf("ledger states (-want +got):\n%s", diff)
	}
	history, err := s.LedgerHistory(t.Context(), "o/r", 1)
	if err != nil {
		t.Fatal(err)
	}
	last := history[len(history)-1]
	if last.Fingerprint != "fp-open" || last.State != review.FindingDismissed || last.By != "alice" || last.RunID != "" {
		t.Errorf("last history entry = %+v, want fp-open dismissed by alice without a run", last)
	}
}
