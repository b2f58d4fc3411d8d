package githubtest_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/github/githubtest"
)

// TestUpdatePullValidates: pulls/update changes what it is sent, and
// refuses what GitHub refuses, changing nothing then.
func TestUpdatePullValidates(t *testing.T) {
	tests := []struct {
		name       string
		body       any
		wantStatus int
		wantBody   string
		wantError  any // the first of "errors", or the message
	}{
		{"body", map[string]any{"body": "new text"}, http.StatusOK, "new text", nil},
		{"null body clears it", []byte(`{"body": null}`), http.StatusOK, "", nil},
		{"unknown keys are ignored", map[string]any{"body": "x", "colour": "red"}, http.StatusOK, "x", nil},
		{"nothing changes nothing", map[string]any{}, http.StatusOK, "old text", nil},
		{"body too long", map[string]any{"body": strings.Repeat("é", githubtest.MaxBodyLength+1)}, http.StatusUnprocessableEntity, "old text",
			map[string]any{"resource": "PullRequest", "code": "custom", "field": "body", "message": "body is too long (maximum is 65536 characters)"}},
		{"body not a string", map[string]any{"body": 5}, http.StatusUnprocessableEntity, "old text",
			"Invalid request.\n\nFor 'properties/body', 5 is not a string."},
		{"bad state", map[string]any{"state": "merged", "body": "x"}, http.StatusUnprocessableEntity, "old text",
			"Invalid request.\n\nFor 'properties/state', \"merged\" is not one of [\"open\", \"closed\"]."},
		{"empty title", map[string]any{"title": " ", "body": "x"}, http.StatusUnprocessableEntity, "old text",
			map[string]any{"resource": "PullRequest", "code": "missing_field", "field": "title"}},
		{"bad JSON", []byte(`{"body":`), http.StatusBadRequest, "old text", "Problems parsing JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake, pr := smallPR(t)
			fake.SetPullBody("o", "r", pr.Number, "old text")
			status, out := send(t, http.MethodPatch, fake.URL()+"repos/o/r/pulls/1", tt.body)
			if status != tt.wantStatus {
				t.Fatalf("status = %d, want %d: %v", status, tt.wantStatus, out)
			}
			if got := fake.PullBody("o", "r", pr.Number); got != tt.wantBody {
				t.Errorf("body = %q, want %q", got, tt.wantBody)
			}
			var gotErr any
			switch {
			case status == http.StatusOK:
				if out["number"] != float64(1) || (tt.wantBody != "" && out["body"] != tt.wantBody) {
					t.Errorf("answer = number %v body %v, want the updated pull request", out["number"], out["body"])
				}
				return
			case out["errors"] != nil:
				gotErr = out["errors"].([]any)[0]
			default:
				gotErr = out["message"]
			}
			if diff := cmp.Diff(tt.wantError, gotErr); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
	fake, _ := smallPR(t)
	if status, _ := send(t, http.MethodPatch, fake.URL()+"repos/o/r/pulls/2", map[string]any{"body": "x"}); status != http.StatusNotFound {
		t.Errorf("PATCH of an unknown pull request = %d, want 404", status)
	}
}
