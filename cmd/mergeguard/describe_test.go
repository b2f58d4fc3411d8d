package main

import (
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/github/githubtest"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/server/metrics"
	"github.com/mergeguard/mergeguard/server/store"
	"github.com/mergeguard/mergeguard/server/store/storetest"
)

// TestDescribeWithEitherApp: the App the holder serves writes
// /mergeguard describe's section whether it came from the environment or
// from /setup. A stored App has no configured webhook secret: the key that
// signs the section's markers is derived from the secret of the App in
// use, not from the configuration.
func TestDescribeWithEitherApp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		stored bool // the App was created through /setup; none is configured
	}{
		{"App in the environment", false},
		{"App created through /setup", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gh := githubtest.New(t)
			app := gh.AppConfig(77)
			gh.AddPR(githubtest.PR{Owner: "acme", Repo: "widgets", Number: 5, Title: "Add widgets",
				Base: map[string]string{"README.md": "Hi\n"}, Head: map[string]string{"README.md": "Hi\n", "w.go": "package w\n"}})
			gh.SetPullBody("acme", "widgets", 5, "The author's text.")

			dbURL := storetest.URL(t)
			cfg := config.Default()
			cfg.GitHub.WebURL, cfg.GitHub.V3APIURL, cfg.GitHub.V4APIURL = gh.WebURL(), app.V3APIURL, app.V4APIURL
			if tt.stored {
				storeApp(t, dbURL, store.AppCredentials{AppID: 77, Slug: "mergeguard", ClientID: "Iv1.x",
					PrivateKey: config.Secret(app.App.PrivateKey), WebhookSecret: config.Secret(app.App.WebhookSecret)})
			} else {
				cfg.GitHub.App = config.GitHubApp{IntegrationID: 77,
					WebhookSecret: config.Secret(app.App.WebhookSecret), PrivateKey: config.Secret(app.App.PrivateKey)}
			}
			cfg.Database.URL, cfg.Database.SecretKey = config.Secret(dbURL), config.Secret(testSecretKey)
			st, err := openStore(t.Context(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(st.Close)
			log := zerolog.Nop()
			ga, err := newGitHubApp(t.Context(), testProcess, cfg, st, &log, "test", metrics.New())
			if err != nil {
				t.Fatal(err)
			}
			repo, err := ga.holder.Repo(1, "acme/widgets")
			if err != nil {
				t.Fatal(err)
			}
			w := &review.Walkthrough{Summary: "Adds widgets.", Source: review.WalkthroughFromDiff,
				Groups: []review.WalkthroughGroup{{Name: "Code", Files: []review.WalkthroughFile{{FilePath: "w.go"}}}}}
			changed, err := repo.Describe(t.Context(), 5, review.Description{Walkthrough: w, HeadSHA: strings.Repeat("a", 40)})
			if err != nil || !changed {
				t.Fatalf("Describe = %v, %v; want the description written", changed, err)
			}
			if body := gh.PullBody("acme", "widgets", 5); !strings.HasPrefix(body, "The author's text.\n\n<!-- mergeguard:describe-start -->\n") {
				t.Errorf("description after describe:\n%s", body)
			}
		})
	}
}
