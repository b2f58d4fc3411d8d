package github

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/github/githubtest"
)

func TestParsePullURL(t *testing.T) {
	tests := map[string]struct {
		in   string
		want PullRef
		ok   bool
	}{
		"github.com":        {"https://github.com/acme/widgets/pull/7", PullRef{Host: "github.com", Owner: "acme", Repo: "widgets", Number: 7}, true},
		"files tab":         {"https://github.com/acme/widgets/pull/7/files", PullRef{Host: "github.com", Owner: "acme", Repo: "widgets", Number: 7}, true},
		"enterprise":        {"https://ghe.example.com/team/app/pull/12/", PullRef{Host: "ghe.example.com", Owner: "team", Repo: "app", Number: 12}, true},
		"issue":             {"https://github.com/acme/widgets/issues/7", PullRef{}, false},
		"zero":              {"https://github.com/acme/widgets/pull/0", PullRef{}, false},
		"no scheme":         {"github.com/acme/widgets/pull/7", PullRef{}, false},
		"short":             {"https://github.com/acme/pull/7", PullRef{}, false},
		"owner/repo#number": {"acme/widgets#7", PullRef{}, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParsePullURL(tc.in)
			if (err == nil) != tc.ok {
				t.Fatalf("err = %v, want ok %v", err, tc.ok)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestAPIURLs(t *testing.T) {
	v3, v4 := APIURLs("github.com")
	ev3, ev4 := APIURLs("ghe.example.com")
	got := []string{v3, v4, ev3, ev4, GraphQLURL("https://api.github.com"), GraphQLURL("https://ghe.example.com/api/v3/"), GraphQLURL("http://127.0.0.1:8080/")}
	want := []string{DefaultV3APIURL, DefaultV4APIURL, "https://ghe.example.com/api/v3/", "https://ghe.example.com/api/graphql",
		"https://api.github.com/graphql", "https://ghe.example.com/api/graphql", "http://127.0.0.1:8080/graphql"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestTokenClients: the clients carry the token (the fake refuses other
// requests) and TokenLogin reads the token's user.
func TestTokenClients(t *testing.T) {
	fake := githubtest.New(t)
	fake.RequireAuth()
	fake.AddToken("ghp-test")
	fake.SetBot(githubtest.User{Login: "ci-user", ID: 77})
	fake.AddPR(testPR(3))
	client, v4, err := NewTokenClients("ghp-test", fake.URL(), "", ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	login, actions, err := TokenLogin(t.Context(), client)
	if err != nil || login != "ci-user" || actions {
		t.Errorf("TokenLogin = %q, %v, %v; want ci-user", login, actions, err)
	}
	repo := NewTokenRepo(client, v4, "acme", "widgets", "", PublisherOptions{BotLogin: login})
	if _, err := repo.Source(7).Files(t.Context()); err != nil {
		t.Errorf("files through the token: %v", err)
	}
	bad, _, err := NewTokenClients("ghp-wrong", fake.URL(), "", ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := TokenLogin(t.Context(), bad); err == nil {
		t.Error("TokenLogin with an unknown token: no error")
	}
	if _, _, err := NewTokenClients("", "", "", ClientOptions{}); err == nil {
		t.Error("NewTokenClients without a token: no error")
	}
}

// TestTokenLoginOfAnInstallationToken: GitHub (and its fake) refuse
// GET /user to an installation token, as to Actions' GITHUB_TOKEN; the
// login is then github-actions[bot].
func TestTokenLoginOfAnInstallationToken(t *testing.T) {
	fake := githubtest.New(t)
	fake.RequireAuth()
	cc, err := NewClientCreator(fake.AppConfig(42), ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	client, err := cc.NewInstallationClient(1)
	if err != nil {
		t.Fatal(err)
	}
	login, actions, err := TokenLogin(t.Context(), client)
	if err != nil || login != ActionsBotLogin || !actions {
		t.Errorf("TokenLogin = %q, %v, %v; want %s, true", login, actions, err, ActionsBotLogin)
	}
}
