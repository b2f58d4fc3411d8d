package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestReviewRedactsSecrets plants secrets of several kinds (an AWS key id,
// a GitHub token, a PEM private key, the same key as a one-line string, a
// key in a test fixture) and checks that no output format of `mergeguard
// review` — nor its log at trace level — repeats any of them, while the
// secrets are found.
func TestReviewRedactsSecrets(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	const (
		aws     = "AKIAZ7VRSQ5TJN2XMY4W"
		token   = "ghp_R7cV2nq8XkLw5mZt3yPb6sJd9fHa4uEo1GiK"
		keyLine = "MIIEowIBAAKCAQEAq7BFUpkGp3+LQmlQYwRk8m5rPcY2bZk8K1h9nT4xZp2Lm0sVwQe"
	)
	pem := "-----BEGIN RSA PRIVATE KEY-----\n" + keyLine + "\n" + keyLine[:40] + "Zx9Q\n-----END RSA PRIVATE KEY-----\n"
	dir := t.TempDir()
	base := gitCommit(t, dir, map[string]string{"main.go": "package main\n"})
	head := gitCommit(t, dir, map[string]string{
		"cloud/keys.go":            "package cloud\n\nconst key = \"" + aws + "\"\n",
		"ci/notify.py":             "GITHUB_TOKEN = \"" + token + "\"\n",
		"deploy/id_rsa":            pem,
		"deploy/key.json":          `{"key": "-----BEGIN RSA PRIVATE KEY-----\n` + keyLine + `\n-----END RSA PRIVATE KEY-----"}` + "\n",
		"pkg/testdata/fixture.env": "AWS_ACCESS_KEY_ID=" + aws + "\n",
	})
	getenv := env(map[string]string{"MERGEGUARD_LOG_LEVEL": "trace"})
	for _, format := range []string{"text", "json", "markdown", "sarif", "rdjson", "line"} {
		t.Run(format, func(t *testing.T) {
			stdout, stderr, err := runCmd(t, getenv, "review", "--repo", dir, "--base", base, "--head", head, "--format", format)
			if err != nil {
				t.Fatalf("err = %v\n%s", err, stderr)
			}
			if !strings.Contains(stdout, "aws-access-token") || !strings.Contains(stdout, "deploy/id_rsa") {
				t.Errorf("the planted secrets are not reported:\n%s", stdout)
			}
			for _, secret := range []string{aws, token, keyLine, keyLine[:40]} {
				if strings.Contains(stdout, secret) || strings.Contains(stderr, secret) {
					t.Errorf("output repeats the secret %.12s…\nstdout:\n%s\nstderr:\n%s", secret, stdout, stderr)
				}
			}
		})
	}
}
