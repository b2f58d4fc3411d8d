package githubtest

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestExampleIsACopy: handlers change the examples they answer with, so
// each call must return a copy that shares nothing with the decoded
// template or with other copies.
func TestExampleIsACopy(t *testing.T) {
	s := New(t)
	b, err := testdata.ReadFile("testdata/examples/pull-request.json")
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	m := s.example("pull-request.json")
	m["title"] = "changed"
	m["head"].(map[string]any)["ref"] = "changed"
	m["labels"].([]any)[0] = "changed"
	if d := cmp.Diff(want, s.example("pull-request.json")); d != "" {
		t.Errorf("example after a copy was changed (-want +got):\n%s", d)
	}
	u := s.userJSON(User{Login: "alice", ID: 1})
	if got := s.example("pull-request.json")["user"].(map[string]any)["login"]; got != want["user"].(map[string]any)["login"] || u["login"] != "alice" {
		t.Errorf("userJSON changed the example's user: login %v", got)
	}
}
