package github

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/github/githubtest"
	"github.com/mergeguard/mergeguard/github/hook"
	"github.com/mergeguard/mergeguard/review"
)

func TestPermission(t *testing.T) {
	fake := githubtest.New(t)
	fake.AddPR(testPR(3))
	for login, role := range map[string]string{"ada": "admin", "max": "maintain", "wes": "write", "tia": "triage", "rob": "read", "nan": "none"} {
		fake.SetPermission("acme", "widgets", login, role)
	}
	tests := []struct {
		user      string
		want      string
		wantWrite bool
	}{
		{"ada", PermissionAdmin, true},
		{"max", PermissionWrite, true}, // GitHub reports maintain as write
		{"wes", PermissionWrite, true},
		{"tia", PermissionRead, false}, // and triage as read
		{"rob", PermissionRead, false},
		{"nan", PermissionNone, false},
		{"stranger", PermissionNone, false}, // 404
	}
	for _, tt := range tests {
		got, err := permission(t.Context(), fake.Client(), "acme", "widgets", tt.user)
		if err != nil {
			t.Fatalf("Permission(%s): %v", tt.user, err)
		}
		if got != tt.want || CanWrite(got) != tt.wantWrite {
			t.Errorf("Permission(%s) = %q (CanWrite %v), want %q (%v)", tt.user, got, CanWrite(got), tt.want, tt.wantWrite)
		}
	}
	fake.FailNext(githubtest.RoutePermission, 500, nil)
	if _, err := permission(t.Context(), fake.Client(), "acme", "widgets", "ada"); err == nil {
		t.Error("Permission through a 500 succeeded; an error must not read as a permission")
	}
}

func TestCanWrite(t *testing.T) {
	for level, want := range map[string]bool{"admin": true, "maintain": true, "write": true, "triage": false, "read": false, "none": false, "": false, "Admin": false} {
		if got := CanWrite(level); got != want {
			t.Errorf("CanWrite(%q) = %v, want %v", level, got, want)
		}
	}
}

func TestRepoHead(t *testing.T) {
	fake := githubtest.New(t)
	pr := fake.AddPR(testPR(3))
	repo := &Repo{owner: "acme", name: "widgets", client: fake.Client()}
	got, err := repo.Head(t.Context(), 7)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(review.PullHead{SHA: pr.HeadSHA, Branch: pr.HeadRef, BaseSHA: pr.BaseSHA}, got); diff != "" {
		t.Errorf("Head (-want +got):\n%s", diff)
	}
	fake.SetHeadSHA("acme", "widgets", 7, "1234567890123456789012345678901234567890")
	if got, _ := repo.Head(t.Context(), 7); got.SHA != "1234567890123456789012345678901234567890" {
		t.Errorf("Head after a push = %q", got.SHA)
	}
	if _, err := repo.Head(t.Context(), 99); !errors.Is(err, review.ErrNotFound) {
		t.Errorf("Head of a missing pull request: %v, want ErrNotFound", err)
	}
}

func TestRepoCommentAndReact(t *testing.T) {
	fake := githubtest.New(t)
	fake.AddPR(testPR(3))
	repo := &Repo{owner: "acme", name: "widgets", client: fake.Client()}
	id, err := repo.Comment(t.Context(), 7, hook.HelpText)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{ReactionSeen, ReactionOK, ReactionOK} {
		if err := repo.React(t.Context(), id, r); err != nil {
			t.Fatalf("React(%s): %v", r, err)
		}
	}
	if err := repo.React(t.Context(), id, "thumbsup"); err == nil {
		t.Error("React accepted an unknown reaction")
	}
	comments := fake.IssueComments("acme", "widgets", 7)
	if len(comments) != 1 || comments[0].ID != id || comments[0].Body != hook.HelpText {
		t.Errorf("comments = %+v", comments)
	}
	var reactions []string
	for _, r := range fake.Reactions("acme", "widgets") {
		reactions = append(reactions, r.Content)
	}
	if d := cmp.Diff([]string{"eyes", "+1"}, reactions); d != "" {
		t.Errorf("reactions (-want +got):\n%s", d)
	}
}
