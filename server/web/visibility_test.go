package web

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/server/access"
)

// fakeReaders answers from a table of repository ids and counts the
// questions.
type fakeReaders struct {
	mu       sync.Mutex
	readable map[int64]bool
	fail     bool
	asked    int
}

func (f *fakeReaders) CanReadID(_ context.Context, _ string, id int64) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked++
	if f.fail {
		return false, errors.New("GitHub is down")
	}
	return f.readable[id], nil
}

func TestVisibility(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	mona := access.Viewer{Login: "mona", UserID: 7, GitHubToken: "ghu_x"}
	tests := []struct {
		name   string
		viewer access.Viewer
		repoID int64
		want   bool
		asked  int
	}{
		{"admin sees all", access.Viewer{Admin: true}, 2, true, 0},
		{"admin sees diff runs and runs without an id", access.Viewer{Admin: true}, 0, true, 0},
		{"nobody else sees diff runs or runs without an id", mona, 0, false, 0},
		{"readable", mona, 1, true, 1},
		{"not readable", mona, 2, false, 1},
		{"a session without a token", access.Viewer{Login: "mona", UserID: 7}, 1, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeReaders{readable: map[int64]bool{1: true}}
			c := newVisibility(f)
			got, err := c.canSee(t.Context(), tt.viewer, tt.repoID)
			if err != nil || got != tt.want || f.asked != tt.asked {
				t.Errorf("canSee = %v, %v after %d questions; want %v after %d", got, err, f.asked, tt.want, tt.asked)
			}
		})
	}
}

func TestVisibilityCache(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	mona := access.Viewer{Login: "mona", UserID: 7, GitHubToken: "ghu_x"}
	f := &fakeReaders{readable: map[int64]bool{1: true}}
	c := newVisibility(f)
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	c.now = func() time.Time { return now }
	ask := func() bool {
		yes, err := c.canSee(t.Context(), mona, 1)
		if err != nil {
			t.Fatal(err)
		}
		return yes
	}
	ask()
	ask()
	if f.asked != 1 {
		t.Errorf("asked GitHub %d times for the same question within the TTL, want 1", f.asked)
	}
	f.readable[1] = false
	now = now.Add(VisibilityTTL)
	if ask() {
		t.Error("after the TTL the old answer was kept")
	}
	// Errors are not kept.
	f.fail = true
	now = now.Add(VisibilityTTL)
	if _, err := c.canSee(t.Context(), mona, 1); err == nil {
		t.Error("GitHub down: want an error")
	}
	f.fail = false
	f.readable[1] = true
	if !ask() {
		t.Error("after GitHub came back, the error was remembered")
	}
	// The cache stays bounded.
	for i := range int64(visibilityEntries + 50) {
		if _, err := c.canSee(t.Context(), mona, 100+i); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(c.entries); n > visibilityEntries {
		t.Errorf("%d cache entries, want at most %d", n, visibilityEntries)
	}
}

func TestVisibleRepos(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	f := &fakeReaders{readable: map[int64]bool{1: true, 3: true}}
	got, err := newVisibility(f).visibleRepos(t.Context(), access.Viewer{UserID: 1, GitHubToken: "t"}, []int64{1, 2, 3, 4})
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64]bool{1: true, 2: false, 3: true, 4: false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("visible (-want +got):\n%s", diff)
	}
}
