package github

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/github/githubtest"
)

// TestParsePullURL covers both uses of the one parser: the API's
// github_url, which must be on the server's GitHub (webURL set), and the
// CLI's --pr, on any host (webURL empty).
func TestParsePullURL(t *testing.T) {
	const gh = "https://github.com/"
	ref := func(host, owner, repo string, n int) PullRef {
		return PullRef{Host: host, Owner: owner, Repo: repo, Number: n}
	}
	tests := map[string]struct {
		web, in string
		want    PullRef
		ok      bool
	}{
		// the CLI: any host
		"cli github.com":        {"", "https://github.com/acme/widgets/pull/7", ref("github.com", "acme", "widgets", 7), true},
		"cli files tab":         {"", "https://github.com/acme/widgets/pull/7/files", ref("github.com", "acme", "widgets", 7), true},
		"cli enterprise":        {"", "https://ghe.example.com/team/app/pull/12/", ref("ghe.example.com", "team", "app", 12), true},
		"cli issue":             {"", "https://github.com/acme/widgets/issues/7", PullRef{}, false},
		"cli zero":              {"", "https://github.com/acme/widgets/pull/0", PullRef{}, false},
		"cli no scheme":         {"", "github.com/acme/widgets/pull/7", PullRef{}, false},
		"cli short":             {"", "https://github.com/acme/pull/7", PullRef{}, false},
		"cli owner/repo#number": {"", "acme/widgets#7", PullRef{}, false},
		// the API: on the server's GitHub only
		"api github.com":        {gh, "https://github.com/octo/hello/pull/12", ref("github.com", "octo", "hello", 12), true},
		"api files tab":         {gh, "https://github.com/octo/hello/pull/12/files", ref("github.com", "octo", "hello", 12), true},
		"api host case":         {gh, "https://GitHub.com/octo/hello/pull/12", ref("GitHub.com", "octo", "hello", 12), true},
		"api web without slash": {"https://github.com", "https://github.com/octo/hello/pull/12", ref("github.com", "octo", "hello", 12), true},
		"api enterprise":        {"https://ghe.example.com/", "https://ghe.example.com/team/svc/pull/3", ref("ghe.example.com", "team", "svc", 3), true},
		"api enterprise path":   {"https://example.com/ghe/", "https://example.com/ghe/team/svc/pull/3", ref("example.com", "team", "svc", 3), true},
		"api other enterprise":  {gh, "https://ghe.example.com/team/svc/pull/3", PullRef{}, false},
		"api other host":        {gh, "https://anything.invalid/acme/priv/pull/3", PullRef{}, false},
		"api lookalike host":    {gh, "https://github.com.evil.example/acme/priv/pull/3", PullRef{}, false},
		"api other port":        {gh, "https://github.com:8443/acme/priv/pull/3", PullRef{}, false},
		"api user":              {gh, "https://user@github.com/acme/priv/pull/3", PullRef{}, false},
		"api off the path":      {"https://example.com/ghe/", "https://example.com/other/team/svc/pull/3", PullRef{}, false},
		"api issue":             {gh, "https://github.com/octo/hello/issues/12", PullRef{}, false},
		"api not a number":      {gh, "https://github.com/octo/hello/pull/zero", PullRef{}, false},
		"api negative":          {gh, "https://github.com/octo/hello/pull/-1", PullRef{}, false},
		"api ftp":               {gh, "ftp://github.com/octo/hello/pull/1", PullRef{}, false},
		"api owner/repo#number": {gh, "octo/hello#1", PullRef{}, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParsePullURL(tc.in, tc.web)
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
	repo := NewTokenRepo(client, v4, "acme", "widgets", "", PublisherOptions{MaxInlineComments: 30, BotLogin: login})
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
