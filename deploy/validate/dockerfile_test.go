package validate

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/moby/buildkit/client/llb"
	"github.com/moby/buildkit/client/llb/sourceresolver"
	"github.com/moby/buildkit/frontend/dockerfile/dockerfile2llb"
	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/moby/patternmatcher"
	"github.com/moby/patternmatcher/ignorefile"
	digest "github.com/opencontainers/go-digest"
)

// repoRoot is the application module's root, the Docker build context.
const repoRoot = "../.."

// parseDockerfile parses a Dockerfile into its stages with BuildKit's parser.
func parseDockerfile(text string) ([]instructions.Stage, error) {
	res, err := parser.Parse(strings.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("parse Dockerfile: %w", err)
	}
	stages, _, err := instructions.Parse(res.AST, nil)
	if err != nil {
		return nil, fmt.Errorf("parse Dockerfile instructions: %w", err)
	}
	return stages, nil
}

// lintDockerfile runs what `docker build --check` runs: BuildKit converts the
// Dockerfile for every stage and reports build errors (unknown instructions,
// bad flags, missing stages) and the build checks' warnings. Base images are
// not pulled: offlineImages answers their metadata.
func lintDockerfile(ctx context.Context, text string) ([]string, error) {
	dt := []byte(text)
	res, err := dockerfile2llb.DockerfileLint(ctx, dt, dockerfile2llb.ConvertOpt{
		MetaResolver: offlineImages{},
		SourceMap:    &llb.SourceMap{Filename: "Dockerfile", Data: dt, Definition: &llb.Definition{}},
	})
	if err != nil {
		return nil, fmt.Errorf("lint Dockerfile: %w", err)
	}
	if res.Error != nil {
		return nil, fmt.Errorf("lint Dockerfile: build error: %s", res.Error.Message)
	}
	var warnings []string
	for _, w := range res.Warnings {
		warnings = append(warnings, w.RuleName+": "+w.Detail)
	}
	return warnings, nil
}

// offlineImages resolves every base image to a minimal linux/amd64 image
// config without a registry, so the Dockerfile checks never use the network.
type offlineImages struct{}

// ResolveImageConfig returns ref unchanged with a minimal image config.
func (offlineImages) ResolveImageConfig(_ context.Context, ref string, _ sourceresolver.Opt) (string, digest.Digest, []byte, error) {
	const config = `{"architecture": "amd64", "os": "linux",
		"rootfs": {"type": "layers", "diff_ids": ["sha256:0000000000000000000000000000000000000000000000000000000000000000"]},
		"config": {"Env": ["PATH=/usr/local/go/bin:/usr/local/bin:/usr/bin:/bin"]}}`
	return ref, "", []byte(config), nil
}

func TestDockerfile(t *testing.T) {
	t.Parallel()
	text, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	warnings, err := lintDockerfile(t.Context(), string(text))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range warnings {
		t.Errorf("Dockerfile check: %s", w)
	}
	stages, err := parseDockerfile(string(text))
	if err != nil {
		t.Fatal(err)
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
	// cgo for tree-sitter (code context), linked statically for distroless/static.
	for _, want := range []string{"CGO_ENABLED=1", "GOTOOLCHAIN=local"} {
		if !slices.Contains(env, want) {
			t.Errorf("builder ENV %v lacks %s", env, want)
		}
	}
	for _, want := range []string{"-trimpath", "-tags netgo,osusergo", "-extldflags -static", "CC=$cc", "-X main.version=${VERSION} -X main.commit=${COMMIT}", "-o /out/mergeguard", "./cmd/mergeguard"} {
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

// TestDockerfileRejects shows that the checks fail on broken Dockerfiles.
func TestDockerfileRejects(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		text string
		want string // in the error or a warning
	}{
		"unknown instruction": {"FROM scratch\nCOPPY a b\n", "unknown instruction: COPPY"},
		"bad mount option":    {"FROM golang:1.26\nRUN --mount=type=cache,target=/x,sharing=everyone true\n", `unsupported sharing value "everyone"`},
		"shell-form CMD":      {"FROM scratch\nCMD serve\n", "JSONArgsRecommended"},
		"undefined ARG":       {"FROM golang:${GO_VERSION}\n", "invalid reference format"},
		"secret in ENV":       {"FROM scratch\nENV GITHUB_APP_PRIVATE_KEY=x\n", "SecretsUsedInArgOrEnv"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			warnings, err := lintDockerfile(t.Context(), tt.text)
			got := strings.Join(warnings, "\n")
			if err != nil {
				got = err.Error()
			}
			if !strings.Contains(got, tt.want) {
				t.Fatalf("checks of %q reported %q, want %q", tt.text, got, tt.want)
			}
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

	for _, path := range []string{
		".env", "deploy/.env", ".git/config", "github/testdata/app.pem", "config/mergeguard.yml",
		".mergeguard/pg/postgresql.conf", "deploy/helm/mergeguard/values.yaml", "docs/operator-guide.md",
	} {
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
