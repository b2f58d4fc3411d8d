package setup

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNewAppURL(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	tests := []struct {
		name string
		f    Form
		want string
	}{
		{"organisation", Form{Owner: "org", Org: "acme", WebURL: "https://github.com"}, "https://github.com/organizations/acme/settings/apps/new?state=s%2Bt"},
		{"personal account", Form{Owner: "user", WebURL: "https://ghe.example.com"}, "https://ghe.example.com/settings/apps/new?state=s%2Bt"},
	}
	for _, tt := range tests {
		if got := newAppURL(tt.f, "s+t"); got != tt.want {
			t.Errorf("%s: newAppURL = %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestAPIURL(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	s := &Setup{d: Deps{WebURL: "https://github.com/", APIURL: "https://api.github.com/"}}
	tests := map[string]string{
		"https://github.com":          "https://api.github.com/",
		"https://github.com/":         "https://api.github.com/",
		"https://ghe.example.com":     "https://ghe.example.com/api/v3/",
		"https://ghe.example.com/sub": "https://ghe.example.com/sub/api/v3/",
	}
	for web, want := range tests {
		if got := s.apiURL(web); got != want {
			t.Errorf("apiURL(%s) = %s, want %s", web, got, want)
		}
	}
}

func TestFormCheck(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	f := Form{Owner: " user ", Org: "ignored", Name: " MergeGuard ", PublicURL: "https://mg.example.com/", WebURL: "https://github.com/"}
	if err := f.check(); err != nil {
		t.Fatal(err)
	}
	want := Form{Owner: "user", Name: "MergeGuard", PublicURL: "https://mg.example.com", WebURL: "https://github.com"}
	if diff := cmp.Diff(want, f); diff != "" {
		t.Errorf("normalised form (-want +got):\n%s", diff)
	}
	bad := []Form{
		{Owner: "team", Name: "x", PublicURL: "https://a.b", WebURL: "https://github.com"},
		{Owner: "org", Org: "a--b", Name: "x", PublicURL: "https://a.b", WebURL: "https://github.com"},
		{Owner: "user", Name: "this name is far too long for github apps", PublicURL: "https://a.b", WebURL: "https://github.com"},
		{Owner: "user", Name: "x", PublicURL: "ftp://a.b", WebURL: "https://github.com"},
		{Owner: "user", Name: "x", PublicURL: "https://user:pw@a.b", WebURL: "https://github.com"},
		{Owner: "user", Name: "x", PublicURL: "https://a.b", WebURL: "https://github.com/#x"},
	}
	for _, f := range bad {
		if err := f.check(); err == nil {
			t.Errorf("check(%+v) passed", f)
		}
	}
}

// TestCheckWebURLSaysWhatIsAllowed: the refusal names github.com, and the
// configured GitHub Enterprise host when there is one.
func TestCheckWebURLSaysWhatIsAllowed(t *testing.T) {
	t.Parallel() // each test has its own database and servers
	tests := []struct {
		configured, in, want, err string
	}{
		{"https://github.com/", "https://GITHUB.com/", "https://github.com", ""},
		{"https://github.com/", "https://ghe.example.com", "", "GitHub's web URL must be https://github.com: MergeGuard sends"},
		{"https://ghe.example.com/", "https://ghe.example.com", "https://ghe.example.com", ""},
		{"https://ghe.example.com/", "https://github.com", "https://github.com", ""},
		{"https://ghe.example.com/", "https://evil.example", "", "must be https://github.com or https://ghe.example.com (github.web_url)"},
		{"https://ghe.example.com/", "https://ghe.example.com/other", "", "must be https://github.com or"},
	}
	for _, tt := range tests {
		s := &Setup{d: Deps{WebURL: tt.configured}}
		got, err := s.checkWebURL(tt.in)
		if got != tt.want || (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("configured %s, checkWebURL(%q) = %q, %v; want %q, %q", tt.configured, tt.in, got, err, tt.want, tt.err)
		}
	}
}
