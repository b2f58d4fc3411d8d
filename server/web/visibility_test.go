package web

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/server/access"
)

// fakeReaders answers from tables and counts the questions.
type fakeReaders struct {
	mu       sync.Mutex
	readable map[string]bool // owner/name
	owns     map[string]bool // org
	fail     bool
	asked    int
}

func (f *fakeReaders) CanRead(_ context.Context, _, owner, name string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked++
	if f.fail {
		return false, errors.New("GitHub is down")
	}
	return f.readable[owner+"/"+name], nil
}

func (f *fakeReaders) OrgAdmin(_ context.Context, _, org string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked++
	if f.fail {
		return false, errors.New("GitHub is down")
	}
	return f.owns[org], nil
}

func TestVisibility(t *testing.T) {
	mona := access.Viewer{Login: "mona", UserID: 7, GitHubToken: "ghu_x"}
	tests := []struct {
		name   string
		viewer access.Viewer
		repo   string
		want   bool
		asked  int
	}{
		{"admin sees all", access.Viewer{Admin: true}, "acme/secret", true, 0},
		{"admin sees diff runs", access.Viewer{Admin: true}, "", true, 0},
		{"nobody else sees diff runs", mona, "", false, 0},
		{"readable", mona, "acme/widgets", true, 2},
		{"not readable", mona, "acme/secret", false, 2},
		{"organisation owner", mona, "owned/anything", true, 1},
		{"a session without a token", access.Viewer{Login: "mona", UserID: 7}, "acme/widgets", false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeReaders{readable: map[string]bool{"acme/widgets": true}, owns: map[string]bool{"owned": true}}
			c := newVisibility(f)
			got, err := c.canSee(t.Context(), tt.viewer, tt.repo)
			if err != nil || got != tt.want || f.asked != tt.asked {
				t.Errorf("canSee = %v, %v after %d questions; want %v after %d", got, err, f.asked, tt.want, tt.asked)
			}
		})
	}
}

func TestVisibilityCache(t *testing.T) {
	mona := access.Viewer{Login: "mona", UserID: 7, GitHubToken: "ghu_x"}
	f := &fakeReaders{readable: map[string]bool{"acme/widgets": true}}
	c := newVisibility(f)
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	c.now = func() time.Time { return now }
	ask := func() bool {
		yes, err := c.canSee(t.Context(), mona, "acme/widgets")
		if err != nil {
			t.Fatal(err)
		}
		return yes
	}
	ask()
	ask()
	if f.asked != 2 {
		t.Errorf("asked GitHub %d times for the same question within the TTL, want 2 (organisation, repository)", f.asked)
	}
	f.readable["acme/widgets"] = false
	now = now.Add(VisibilityTTL)
	if ask() {
		t.Error("after the TTL the old answer was kept")
	}
	// Errors are not kept.
	f.fail = true
	now = now.Add(VisibilityTTL)
	if _, err := c.canSee(t.Context(), mona, "acme/widgets"); err == nil {
		t.Error("GitHub down: want an error")
	}
	f.fail = false
	f.readable["acme/widgets"] = true
	if !ask() {
		t.Error("after GitHub came back, the error was remembered")
	}
	// The cache stays bounded.
	for i := range visibilityEntries + 50 {
		if _, err := c.canSee(t.Context(), mona, fmt.Sprintf("org%d/repo", i)); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(c.entries); n > visibilityEntries {
		t.Errorf("%d cache entries, want at most %d", n, visibilityEntries)
	}
}

func TestVisibleRepos(t *testing.T) {
	f := &fakeReaders{readable: map[string]bool{"a/1": true, "b/2": true}}
	got, err := newVisibility(f).visibleRepos(t.Context(), access.Viewer{UserID: 1, GitHubToken: "t"}, []string{"a/1", "a/2", "b/2", "c/3"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"a/1": true, "a/2": false, "b/2": true, "c/3": false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("visible (-want +got):\n%s", diff)
	}
}
