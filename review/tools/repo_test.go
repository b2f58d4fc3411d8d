package tools_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/review/source/localgit"
	"github.com/mergeguard/mergeguard/review/tools"
)

// gitRepo builds a real repository for the tools to read: main with one
// commit, feature with two more, fixed authors and dates so that commit
// ids are the same on every run.
type gitRepo struct {
	t   *testing.T
	dir string
}

func (r *gitRepo) git(env []string, args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", r.dir, "-c", "user.email=dev@example.com",
		"-c", "commit.gpgsign=false"}, args...)...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + os.DevNull}, env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func (r *gitRepo) write(files map[string]string) {
	r.t.Helper()
	for p, content := range files {
		full := filepath.Join(r.dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
}

func (r *gitRepo) commit(author, date, msg string) {
	r.t.Helper()
	env := []string{"GIT_AUTHOR_DATE=" + date, "GIT_COMMITTER_DATE=" + date}
	r.git(env, "add", "-A")
	r.git(env, "-c", "user.name="+author, "commit", "-q", "-m", msg)
}

const mainGo = `package main

import (
	"fmt"
	"net/http"
)

// TODO: read the port from the environment.
const port = 8080

func handler(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("name")
	fmt.Fprintf(w, "hello %s", name)
}

func health(w http.ResponseWriter, r *http.Request) {
	w.WriteHeader(http.StatusOK)
}

func routes(mux *http.ServeMux) {
	mux.HandleFunc("/", handler)
	mux.HandleFunc("/healthz", health)
}

func serve() error {
	mux := http.NewServeMux()
	routes(mux)
	return http.ListenAndServe(fmt.Sprintf(":%d", port), mux)
}

func main() {
	if err := serve(); err != nil {
		panic(err)
	}
}
`

func numberedRows(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "row %d\n", i)
	}
	return b.String()
}

// newRepo returns a source over a feature branch that modifies
// cmd/app/main.go in two places, renames old/name.go to pkg/name.go,
// deletes internal/store/legacy.go, adds docs/new.md and changes a binary.
func newRepo(t *testing.T) *localgit.Source {
	t.Helper()
	r := &gitRepo{t: t, dir: t.TempDir()}
	r.git(nil, "init", "-q", "-b", "main")
	r.write(map[string]string{
		"cmd/app/main.go":          mainGo,
		"internal/store/store.go":  "package store\n\n// Store keeps things.\ntype Store struct{}\n\n// TODO: add a cache.\n",
		"internal/store/legacy.go": "package store\n\nfunc legacy() {}\n",
		"old/name.go":              "package name\n\n// Name is a name.\nconst Name = \"name\"\n\nconst Other = 1\n\nconst Third = 3\n",
		"README.md":                "# App\n\nA small server.\n",
		"big.txt":                  numberedRows(1000),
		"assets/logo.png":          "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x01",
		"scripts/build.sh":         "#!/bin/sh\nset -eu\ngo build ./...\n",
		"scripts/test.sh":          "#!/bin/sh\nset -eu\ngo test ./...\n",
		"web/index.html":           "<!doctype html>\n<title>App</title>\n",
	})
	r.commit("Ada", "2024-03-01T09:00:00Z", "Initial import")

	r.git(nil, "checkout", "-q", "-b", "feature")
	changed := strings.Replace(mainGo, "const port = 8080", "const port = 9090", 1)
	changed = strings.Replace(changed, "\t\tpanic(err)", "\t\tfmt.Println(\"TODO: exit code\", err)", 1)
	if err := os.MkdirAll(filepath.Join(r.dir, "pkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.git(nil, "mv", "old/name.go", "pkg/name.go")
	r.git(nil, "rm", "-q", "internal/store/legacy.go")
	r.write(map[string]string{
		"cmd/app/main.go": changed,
		"pkg/name.go":     "package name\n\n// Name is a name.\nconst Name = \"renamed\"\n\nconst Other = 1\n\nconst Third = 3\n",
		"docs/new.md":     "# New\n\nTODO: write the docs.\n",
		"assets/logo.png": "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x02",
	})
	r.commit("Bob", "2024-03-02T10:30:00Z", "Serve on 9090 and move name\n\nAlso drop the legacy store.")
	r.write(map[string]string{"internal/store/store.go": "package store\n\n// Store keeps things.\ntype Store struct{ n int }\n\n// TODO: add a cache.\n"})
	r.commit("Cy", "2024-03-03T11:45:00Z", "Count in the store")

	src, err := localgit.New(t.Context(), r.dir, "", "")
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// toolbox returns the tools over src.
func toolbox(t *testing.T, src *localgit.Source, cfg config.LLM) *tools.Toolbox {
	t.Helper()
	text, err := src.Diff(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	d, err := diff.ParseString(text)
	if err != nil {
		t.Fatal(err)
	}
	return tools.New(src, d, cfg)
}

// limits is the default configuration with the tools' results bounded to
// resultBytes and read_file_part to readLines.
func limits(resultBytes, readLines int) config.LLM {
	cfg := config.Default().LLM
	cfg.ToolResultBytes, cfg.ToolReadLines = resultBytes, readLines
	return cfg
}

// strictTools is the default configuration with llm.strict_tools strict.
func strictTools(strict bool) config.LLM {
	cfg := config.Default().LLM
	cfg.StrictTools = strict
	return cfg
}
