package validate

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/linter"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/moby/patternmatcher"
	"github.com/moby/patternmatcher/ignorefile"
)

// repoRoot is the application module's root, the Docker build context.
const repoRoot = "../.."

// parseDockerfile parses a Dockerfile with BuildKit's parser, returning the
// stages and every warning: the parser's and those of the build checks that
// run while parsing (a subset of `docker build --check`).
func parseDockerfile(text string) ([]instructions.Stage, []string, error) {
	res, err := parser.Parse(strings.NewReader(text))
	if err != nil {
		return nil, nil, fmt.Errorf("parse Dockerfile: %w", err)
	}
	var warnings []string
	for _, w := range res.Warnings {
		warnings = append(warnings, w.Short)
	}
	lint := linter.New(&linter.Config{
		Warn: func(rule, _, _, msg string, _ []parser.Range) {
			warnings = append(warnings, rule+": "+msg)
		},
	})
	stages, _, err := instructions.Parse(res.AST, lint)
	if err != nil {
		return nil, nil, fmt.Errorf("parse Dockerfile instructions: %w", err)
	}
	return stages, warnings, nil
}

func TestDockerfile(t *testing.T) {
	t.Parallel()
	text, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	stages, warnings, err := parseDockerfile(string(text))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range warnings {
		t.Errorf("Dockerfile warning: %s", w)
	}
	if len(stages) != 2 {
		t.Fatalf("got %d stages, want a builder and a final stage", len(stages))
	}
	build, final := stages[0], stages[1]

	if build.BaseName != "golang:1.26" {
		t.Errorf("builder image %q, want golang:1.26 (the module's Go version)", build.BaseName)
	}
	var env []string
	var goBuild string
	var mounts []string
	for _, cmd := range build.Commands {
		switch c := cmd.(type) {
		case *instructions.EnvCommand:
			for _, kv := range c.Env {
				env = append(env, kv.Key+"="+kv.Value)
			}
		case *instructions.RunCommand:
			line := strings.Join(c.CmdLine, " ")
			if !strings.Contains(line, "go build") {
				continue
			}
			goBuild = line
			if err := c.Expand(func(word string) (string, error) { return word, nil }); err != nil {
				t.Fatalf("RUN flags: %v", err)
			}
			for _, m := range instructions.GetMounts(c) {
				mounts = append(mounts, string(m.Type)+":"+m.Target)
			}
		}
	}
	for _, want := range []string{"CGO_ENABLED=0", "GOTOOLCHAIN=local"} {
		if !slices.Contains(env, want) {
			t.Errorf("builder ENV %v lacks %s", env, want)
		}
	}
	for _, want := range []string{"-trimpath", "-X main.version=${VERSION}", "-o /out/mergeguard", "./cmd/mergeguard"} {
		if !strings.Contains(goBuild, want) {
			t.Errorf("go build command %q lacks %q", goBuild, want)
		}
	}
	for _, want := range []string{"cache:/go/pkg/mod", "cache:/root/.cache/go-build"} {
		if !slices.Contains(mounts, want) {
			t.Errorf("go build mounts %v lack %s", mounts, want)
		}
	}

	if !strings.HasPrefix(final.BaseName, "gcr.io/distroless/static") || !strings.HasSuffix(final.BaseName, ":nonroot") {
		t.Errorf("final image %q, want distroless static :nonroot", final.BaseName)
	}
	got := map[string]string{}
	for _, cmd := range final.Commands {
		switch c := cmd.(type) {
		case *instructions.CopyCommand:
			got["COPY"] = c.From + " " + strings.Join(c.SourcePaths, " ") + " " + c.DestPath
		case *instructions.UserCommand:
			got["USER"] = c.User
		case *instructions.ExposeCommand:
			got["EXPOSE"] = strings.Join(c.Ports, " ")
		case *instructions.EntrypointCommand:
			got["ENTRYPOINT"] = fmt.Sprintf("shell=%v %q", c.PrependShell, c.CmdLine)
		case *instructions.CmdCommand:
			got["CMD"] = fmt.Sprintf("shell=%v %q", c.PrependShell, c.CmdLine)
		case *instructions.WorkdirCommand:
			got["WORKDIR"] = c.Path
		}
	}
	want := map[string]string{
		"COPY":       "build /out/mergeguard /mergeguard",
		"USER":       "65532:65532",
		"EXPOSE":     "8080",
		"ENTRYPOINT": `shell=false ["/mergeguard"]`,
		"CMD":        `shell=false ["serve"]`,
		// The default --config path config/mergeguard.yml resolves here; the chart mounts it.
		"WORKDIR": "/app",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("final stage (-want +got):\n%s", diff)
	}
}

// TestDockerfileRejects shows that a broken Dockerfile does not pass.
func TestDockerfileRejects(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"unknown instruction": "FROM scratch\nCOPPY a b\n",
		"bad mount flag":      "FROM scratch\nRUN --mount=type=cache,target=/x,sharing=everyone true\n",
		"stage name casing":   "FROM scratch AS Build\n", // build check StageNameCasing
	}
	for name, text := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			stages, warnings, err := parseDockerfile(text)
			if err == nil && len(warnings) == 0 {
				// RUN flags are only parsed on expansion.
				for _, cmd := range stages[0].Commands {
					if run, ok := cmd.(*instructions.RunCommand); ok {
						err = run.Expand(func(word string) (string, error) { return word, nil })
					}
				}
			}
			if err == nil && len(warnings) == 0 {
				t.Fatalf("%q passed", text)
			}
			t.Logf("rejected: err=%v warnings=%v", err, warnings)
		})
	}
}

// TestDockerignore checks the root .dockerignore against the repository: the
// build context keeps every file `go build` may need (Go sources and any
// files they embed) and drops secrets.
func TestDockerignore(t *testing.T) {
	t.Parallel()
	f, err := os.Open(filepath.Join(repoRoot, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	patterns, err := ignorefile.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	pm, err := patternmatcher.New(patterns)
	if err != nil {
		t.Fatal(err)
	}
	ignored := func(path string) bool {
		t.Helper()
		m, err := pm.MatchesOrParentMatches(path)
		if err != nil {
			t.Fatalf("match %s: %v", path, err)
		}
		return m
	}

	for _, path := range []string{".env", "deploy/.env", ".git/config", "github/testdata/app.pem", "deploy/helm/mergeguard/values.yaml", "docs/operator-guide.md"} {
		if !ignored(path) {
			t.Errorf("%s is in the build context", path)
		}
	}

	needed := []string{"go.mod", "go.sum", "cmd/mergeguard/main.go"}
	needed = append(needed, buildFiles(t)...)
	for _, path := range needed {
		if ignored(path) {
			t.Errorf("%s is needed by go build but .dockerignore drops it", path)
		}
	}
}

// buildFiles lists the application module's files that `go build` may read:
// every file in or below a directory holding non-test Go code (embedded
// files), except test data.
func buildFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	goDirs := map[string]bool{}
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(repoRoot, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == ".git" || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && rel != "." {
				return filepath.SkipDir // another module, e.g. deploy/validate
			}
			return nil
		}
		if strings.HasSuffix(rel, ".go") && !strings.HasSuffix(rel, "_test.go") {
			goDirs[filepath.ToSlash(filepath.Dir(rel))] = true
		}
		files = append(files, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var needed []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		for dir := filepath.ToSlash(filepath.Dir(f)); dir != "."; dir = filepath.ToSlash(filepath.Dir(dir)) {
			if goDirs[dir] {
				needed = append(needed, f)
				break
			}
		}
	}
	if !slices.Contains(needed, "migrations/migrations.go") {
		t.Fatalf("found no Go package files under %s: %v", repoRoot, needed)
	}
	return needed
}
