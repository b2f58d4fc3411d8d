package e2e

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mergeguard/mergeguard/github/githubtest"
	"github.com/mergeguard/mergeguard/server/store/storetest"
)

// TestSetupThenWebhookAtOnce: GitHub sends the installation delivery as
// soon as the user installs the App /setup created, and does not send it
// again. Right after the callback, that delivery is accepted (2xx) by the
// replica that stored the App (it serves it at once) and by another
// replica (it reads the stored App again when it has none), not answered
// 503 until the next notification or poll.
func TestSetupThenWebhookAtOnce(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	gh := githubtest.New(t)
	gh.RequireAuth()
	secretKey := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	env := map[string]string{
		"MERGEGUARD_WORKERS": "0", "MERGEGUARD_SECRET_KEY": secretKey,
		"GITHUB_WEB_URL": gh.WebURL(), "GITHUB_V3_API_URL": gh.URL(), "GITHUB_V4_API_URL": gh.GraphQLURL(),
	}
	replicas := startReplicas(t, bin, storetest.Empty(t), serveOptions{env: env})
	created := createApp(t, gh, replicas[0])
	app := &fakeApp{gh: gh, secret: []byte(created.WebhookSecret), client: &http.Client{Timeout: 30 * time.Second}}
	installation := githubtest.Payload(t, "installation/created.payload.json")
	for _, r := range replicas {
		d := githubtest.Delivery{Event: "installation", ID: "installed-" + strings.ReplaceAll(r.name, " ", "-"), Payload: installation}
		if status, err := app.deliver(t.Context(), r.url, d); err != nil || status/100 != 2 {
			t.Errorf("installation delivered to %s right after /setup = %d, %v; want 2xx", r.name, status, err)
		}
	}
}
