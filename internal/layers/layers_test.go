package layers

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/mergeguard/mergeguard"

// rule says what the packages under one folder of the module may import of
// the module: the folders listed (and their sub-packages) but those it may
// not, and, outside the module, anything but the forbidden imports.
type rule struct {
	folder    string
	may       []string
	mayNot    []string
	forbidden []string
}

// githubLibraries are the GitHub client libraries; only package github and
// the composition root use them.
var githubLibraries = []string{
	"github.com/google/go-github/",
	"github.com/bradleyfalzon/ghinstallation/",
	"github.com/palantir/go-githubapp/",
	"github.com/shurcooL/githubv4",
}

// rules are the import table of docs/architecture.md (Packages), most
// specific folder first.
var rules = []rule{
	{folder: "cmd", may: []string{""}},
	{folder: "config", forbidden: githubLibraries},
	{folder: "migrations"},
	{folder: "internal", may: []string{"internal"}},
	// The life of a pull request is pure, as review/ is, and needs nothing
	// of internal/ either: it speaks through the role interfaces it defines,
	// and to the pipeline in review/task's types, so its tests link none of
	// the pipeline's linters and parsers (cgo, BuildKit).
	{folder: "review/lifecycle", may: []string{"review", "config"}, mayNot: []string{"review/pipeline"}, forbidden: githubLibraries},
	{folder: "review", may: []string{"review", "config", "internal"}, forbidden: githubLibraries},
	// The webhook wire format and comment commands: bytes in, small
	// event types and commands out; nothing of the API client or review/.
	{folder: "github/hook", may: []string{"internal"}, forbidden: githubLibraries},
	// MergeGuard's markdown and the rendering of untrusted text: strings
	// in, strings out; nothing of the API client.
	{folder: "github/markdown", may: []string{"github/markdown", "review", "internal"}, forbidden: githubLibraries},
	{folder: "github", may: []string{"github", "review", "config", "internal"}},
	// config: the stored GitHub App's secrets are config.Secret, which never print.
	{folder: "server/store", may: []string{"server/store", "review", "config", "migrations", "internal"}, forbidden: githubLibraries},
	{folder: "server/worker", may: []string{"server", "review", "github", "config", "internal"}, forbidden: githubLibraries},
	{folder: "server/webhook", may: []string{"server", "review", "github", "config", "internal"}, forbidden: githubLibraries},
	{folder: "server", may: []string{"server", "review", "github", "config", "internal"}},
	{folder: "e2e", may: []string{""}},
	{folder: "deploy", may: []string{""}},
}

func ruleFor(folder string) (rule, bool) {
	for _, r := range rules {
		if within(folder, r.folder) {
			return r, true
		}
	}
	return rule{}, false
}

// within reports whether pkg is folder or below it; "" holds everything.
func within(pkg, folder string) bool {
	return folder == "" || pkg == folder || strings.HasPrefix(pkg, folder+"/")
}

// knownExceptions are imports that break a rule today, each with the work
// that removes it. The test fails when an exception is no longer needed, so
// the list only shrinks.
var knownExceptions = map[string]string{}

// check returns the broken rules of pkg importing imp.
func check(pkg, imp string) string {
	r, ok := ruleFor(pkg)
	if !ok {
		return pkg + ": no layering rule covers this folder; add one to rules"
	}
	if local, ours := strings.CutPrefix(imp, module+"/"); ours {
		for _, not := range r.mayNot {
			if within(local, not) {
				return pkg + " imports " + local + ": " + r.folder + "/ may not import " + not
			}
		}
		for _, may := range r.may {
			if within(local, may) {
				return ""
			}
		}
		return pkg + " imports " + local + ": " + r.folder + "/ may import only " + strings.Join(r.may, ", ")
	}
	for _, f := range r.forbidden {
		if strings.HasPrefix(imp, f) {
			return pkg + " imports " + imp + ": " + r.folder + "/ reaches GitHub only through package github"
		}
	}
	return ""
}

// TestImportDirections lists every package of the module with its imports
// (not its tests') and checks each import against the rules.
func TestImportDirections(t *testing.T) {
	cmd := exec.CommandContext(t.Context(), "go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	packages := 0
	used := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		pkg, ok := strings.CutPrefix(fields[0], module+"/")
		if !ok {
			continue // the module root has no package
		}
		packages++
		for _, imp := range fields[1:] {
			problem := check(pkg, imp)
			if _, known := knownExceptions[pkg+" "+imp]; known && problem != "" {
				used[pkg+" "+imp] = true
				continue
			}
			if problem != "" {
				t.Error(problem)
			}
		}
	}
	for exc := range knownExceptions {
		if !used[exc] {
			t.Errorf("exception %q is no longer needed: delete it from knownExceptions", exc)
		}
	}
	if packages < 20 {
		t.Fatalf("go list found %d packages of %s; the test reads the wrong tree", packages, module)
	}
}

// TestCheckCatchesForbiddenImports proves the rules bite.
func TestCheckCatchesForbiddenImports(t *testing.T) {
	tests := []struct {
		pkg, imp string
		broken   bool
	}{
		{"review/pipeline", module + "/github", true},
		{"review/pipeline", module + "/server/store", true},
		{"review/pipeline", module + "/config", false},
		{"review/pipeline", module + "/internal/retry", false},
		{"review/lifecycle", module + "/internal/retry", true},
		{"review/lifecycle", module + "/github", true},
		{"review/lifecycle", module + "/server/store", true},
		{"review/lifecycle", module + "/review/pipeline", true},
		{"review/lifecycle", module + "/review/task", false},
		{"review/lifecycle", module + "/config", false},
		{"config", module + "/review", true},
		{"server/worker", "github.com/google/go-github/v60/github", true},
		{"server/webhook", "github.com/palantir/go-githubapp/githubapp", true},
		{"server/worker", module + "/github", false},
		{"github", module + "/server/store", true},
		{"github/hook", module + "/github", true},
		{"github/hook", module + "/review", true},
		{"github/hook", module + "/internal/mdscan", false},
		{"github/hook", "github.com/google/go-github/v60/github", true},
		{"github/markdown", module + "/github", true},
		{"github/markdown", "github.com/google/go-github/v60/github", true},
		{"github/markdown", module + "/review/text", false},
		{"server/store", module + "/github", true},
		{"server/api", module + "/server/store", false},
		{"cmd/mergeguard", "github.com/palantir/go-githubapp/githubapp", false},
		{"newfolder", "fmt", true},
	}
	for _, tt := range tests {
		if got := check(tt.pkg, tt.imp) != ""; got != tt.broken {
			t.Errorf("check(%s, %s) broken = %v, want %v", tt.pkg, tt.imp, got, tt.broken)
		}
	}
}
