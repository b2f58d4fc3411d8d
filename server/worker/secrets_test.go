package worker_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mergeguard/mergeguard/github/githubtest"
	"github.com/mergeguard/mergeguard/server/store"
)

// TestSecretsOnGitHub: a live key blocks the check, a key in a test
// fixture is posted inline without blocking, and nothing MergeGuard sends
// to GitHub (the review's body, its inline comments, the check run) repeats
// any planted secret, a private key written as a one-line string included.
func TestSecretsOnGitHub(t *testing.T) {
	t.Parallel() // each test has its own database and fakes
	const (
		aws     = "AKIAZ7VRSQ5TJN2XMY4W"
		keyLine = "MIIEowIBAAKCAQEAq7BFUpkGp3+LQmlQYwRk8m5rPcY2bZk8K1h9nT4xZp2Lm0sVwQe"
	)
	fixture := map[string]string{"pkg/testdata/creds.env": "AWS_ACCESS_KEY_ID=" + aws + "\n"}
	tests := []struct {
		name       string
		added      map[string]string
		conclusion string
	}{
		{"fixture key only", fixture, "success"},
		{"live keys too", map[string]string{
			"pkg/testdata/creds.env": fixture["pkg/testdata/creds.env"],
			"deploy/key.json":        `{"key": "-----BEGIN RSA PRIVATE KEY-----\n` + keyLine + `\n-----END RSA PRIVATE KEY-----"}` + "\n",
			"deploy.sh":              "#!/bin/sh\nexport AWS_ACCESS_KEY_ID=" + aws + "\n",
		}, "failure"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, reviewer)
			e.gh.AddPR(pr(fixtureSHA, map[string]string{"README.md": "Hello\n"}, tt.added))
			e.opened("d-1", fixtureSHA)
			e.start(e.store, e.options(), nil)
			if run := e.waitDone(1)[0]; run.Status != store.StatusSucceeded {
				t.Fatalf("run: %s (%q %s), want succeeded", run.Status, run.StatusReason, run.Error)
			}
			if checks := e.checks(); len(checks) != 1 || checks[0].Conclusion != tt.conclusion {
				t.Errorf("check runs %+v, want one %s", checks, tt.conclusion)
			}
			reviews := e.gh.CallsTo(githubtest.RouteCreateReview)
			if len(reviews) != 1 {
				t.Fatalf("%d reviews posted, want 1", len(reviews))
			}
			var posted struct {
				Comments []struct{ Path string } `json:"comments"`
			}
			if err := json.Unmarshal(reviews[0].Body, &posted); err != nil {
				t.Fatal(err)
			}
			inline := false
			for _, c := range posted.Comments {
				inline = inline || c.Path == "pkg/testdata/creds.env"
			}
			if !inline {
				t.Errorf("the fixture key is not posted inline: %s", reviews[0].Body)
			}
			for _, c := range e.gh.Calls() {
				body := string(c.Body)
				if strings.Contains(body, aws) || strings.Contains(body, keyLine) || strings.Contains(body, keyLine[:40]) {
					t.Errorf("%s %s sends a planted secret to GitHub:\n%s", c.Method, c.Path, body)
				}
			}
		})
	}
}
