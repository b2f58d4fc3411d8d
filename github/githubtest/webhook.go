package githubtest

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"strings"
	"testing"
)

// Payload returns a real webhook payload from testdata/webhooks, named
// "<event>/<file>", e.g. "pull_request/opened.payload.json" or
// "issue_comment/githubIssueCommentEvent.json" (see WebhookPayloads).
func Payload(t testing.TB, name string) []byte {
	t.Helper()
	b, err := testdata.ReadFile("testdata/webhooks/" + name)
	if err != nil {
		t.Fatalf("githubtest: webhook payload %s: %v", name, err)
	}
	return b
}

// WebhookPayloads lists the payloads Payload serves.
func WebhookPayloads() []string {
	var names []string
	_ = fs.WalkDir(testdata, "testdata/webhooks", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, strings.TrimPrefix(p, "testdata/webhooks/"))
		}
		return err
	})
	return names
}

// SetFields returns payload with fields replaced, each named by its dotted
// path ("comment.body", "installation.id"); missing objects are created.
// Use it to adapt a real payload (the issue_comment on a pull request has a
// placeholder body and no installation).
func SetFields(t testing.TB, payload []byte, fields map[string]any) []byte {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(payload, &doc); err != nil {
		t.Fatalf("githubtest: SetFields: %v", err)
	}
	for path, v := range fields {
		keys := strings.Split(path, ".")
		m := doc
		for _, k := range keys[:len(keys)-1] {
			next, ok := m[k].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[k] = next
			}
			m = next
		}
		m[keys[len(keys)-1]] = v
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatalf("githubtest: SetFields: %v", err)
	}
	return b
}

// Sign returns the X-Hub-Signature-256 value GitHub sends for payload:
// "sha256=" and the hex HMAC-SHA256 of the body under the webhook secret.
func Sign(secret, payload []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write(payload)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// Delivery is one webhook delivery.
type Delivery struct {
	// Event is the X-GitHub-Event header, e.g. "pull_request".
	Event string
	// ID is the X-GitHub-Delivery header, a GUID unique per delivery
	// (a redelivery keeps it).
	ID      string
	Payload []byte
}

// Request builds the POST GitHub sends to url for the delivery, signed with
// secret (X-Hub-Signature-256), with GitHub's headers.
func (d Delivery) Request(ctx context.Context, url string, secret []byte) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(d.Payload))
	if err != nil {
		return nil, fmt.Errorf("githubtest: webhook request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "GitHub-Hookshot/githubtest")
	req.Header.Set("X-GitHub-Event", d.Event)
	req.Header.Set("X-GitHub-Delivery", d.ID)
	req.Header.Set("X-Hub-Signature-256", Sign(secret, d.Payload))
	return req, nil
}
