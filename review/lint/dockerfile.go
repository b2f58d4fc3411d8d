package lint

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/moby/buildkit/client/llb"
	"github.com/moby/buildkit/client/llb/sourceresolver"
	"github.com/moby/buildkit/frontend/dockerfile/dockerfile2llb"
	"github.com/opencontainers/go-digest"
	"gopkg.in/yaml.v3"

	"github.com/mergeguard/mergeguard/review"
)

// Dockerfile checks Dockerfiles with BuildKit's build checks, the rules
// `docker build --check` runs: stage and keyword casing, undefined ARGs and
// variables, relative WORKDIRs, shell-form commands where JSON is
// recommended, deprecated instructions, secrets passed in ARG or ENV, and
// more; and with the common hadolint rules beside them (an untagged or
// latest base image, apt-get without -y or --no-install-recommends, pip's
// cache, sudo, cd, a download piped into a shell: see dockerrules.go).
// Nothing is built and no image is pulled.
type Dockerfile struct{}

// Name implements Linter.
func (Dockerfile) Name() string { return review.AnalyzerPrefix + "dockerfile" }

// Applies implements Linter: Dockerfile, Containerfile, *.Dockerfile and
// Dockerfile.* files.
func (Dockerfile) Applies(p string) bool {
	b := base(p)
	return b == "dockerfile" || b == "containerfile" ||
		strings.HasSuffix(b, ".dockerfile") || strings.HasPrefix(b, "dockerfile.")
}

// Lint implements Linter.
func (d Dockerfile) Lint(ctx context.Context, files []File, tree Tree) (Report, error) {
	var rep Report
	ignored, err := hadolintIgnored(ctx, tree)
	if err != nil {
		rep.Notes = append(rep.Notes, fmt.Sprintf("dockerfile: %v; every rule was checked", err))
	}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		fs, err := d.lint(ctx, f, ignored)
		if err != nil {
			rep.Notes = append(rep.Notes, fmt.Sprintf("dockerfile: could not check %s: %v", f.Path(), err))
			continue
		}
		rep.Findings = append(rep.Findings, onAdded(f.Diff, fs)...)
	}
	return rep, nil
}

// lint runs BuildKit's checks on one file. A file BuildKit cannot parse
// is reported as one finding at the line it names.
func (d Dockerfile) lint(ctx context.Context, f File, ignored []string) ([]review.Finding, error) {
	scratch := llb.Scratch()
	def, err := scratch.Marshal(ctx)
	if err != nil {
		return nil, fmt.Errorf("source map: %w", err)
	}
	sm := llb.NewSourceMap(&scratch, f.Path(), "Dockerfile", f.Content)
	sm.Definition = def // the lint results name their source by it
	res, err := dockerfile2llb.DockerfileLint(ctx, f.Content, dockerfile2llb.ConvertOpt{
		SourceMap: sm, MetaResolver: offline{},
	})
	if err != nil {
		return nil, err
	}
	var out []review.Finding
	for _, w := range res.Warnings {
		line := 0
		if w.Location != nil && len(w.Location.Ranges) > 0 {
			line = int(w.Location.Ranges[0].Start.Line)
		}
		sev, cat, conf := review.SeverityStyle, review.CategoryQuality, exact
		switch w.RuleName {
		case "SecretsUsedInArgOrEnv":
			// A name that looks like a secret's is a guess.
			sev, cat, conf = review.SeverityWarning, review.CategorySecurity, heuristic
		case "UndefinedVar", "UndefinedArgInFrom", "InvalidDefaultArgInFrom", "DuplicateStageName",
			"ReservedStageName", "WorkdirRelativePath", "CopyIgnoredFile", "InvalidBaseImagePlatform":
			sev, cat = review.SeverityWarning, review.CategoryBug
		}
		desc := fmt.Sprintf("%s\n\nReported by BuildKit's build check %s (%s).", w.Detail, w.RuleName, w.URL)
		fd := finding(d.Name(), f, line, sev, cat, conf, title(w.Detail), desc)
		fd.Rule = w.RuleName
		out = append(out, fd)
	}
	if e := res.Error; e != nil {
		line := 0
		if len(e.Location.Ranges) > 0 {
			line = int(e.Location.Ranges[0].Start.Line)
		}
		out = append(out, finding(d.Name(), f, line, review.SeverityWarning, review.CategoryBug, exact,
			title(e.Message), e.Message+"\n\nBuildKit cannot build this Dockerfile."))
		return out, nil // BuildKit's parse error says it all
	}
	hits, err := bestPractices(f.Content, ignored)
	if err != nil {
		return out, nil // BuildKit reported what it could; the rules need a parsed file
	}
	for _, h := range hits {
		r := h.rule
		desc := fmt.Sprintf("%s\n\nRule %s: %s", r.why, r.id, r.helpURL())
		fd := finding(d.Name(), f, h.line, r.severity, r.category, r.conf, r.id+": "+r.title, desc)
		fd.Rule = r.id
		out = append(out, fd)
	}
	return out, nil
}

// hadolintIgnored returns the rules the repository's hadolint
// configuration ignores (its `ignored` list). It is read at the head, like
// the `# hadolint ignore=` directives in the Dockerfiles themselves: the
// rules it turns off never block a merge.
func hadolintIgnored(ctx context.Context, tree Tree) ([]string, error) {
	if tree == nil {
		return nil, nil
	}
	for _, name := range []string{".hadolint.yaml", ".hadolint.yml"} { // hadolint's order
		b, err := tree.ReadFile(ctx, name)
		if errors.Is(err, review.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("could not read %s: %w", name, err)
		}
		if len(b) > maxHadolintConfig {
			return nil, fmt.Errorf("%s is larger than %d bytes", name, maxHadolintConfig)
		}
		var cfg struct {
			Ignored []string `yaml:"ignored"`
		}
		if err := yaml.Unmarshal(b, &cfg); err != nil {
			return nil, fmt.Errorf("could not read %s: %w", name, err)
		}
		return cfg.Ignored, nil
	}
	return nil, nil
}

// maxHadolintConfig bounds the hadolint configuration read.
const maxHadolintConfig = 64 << 10

// offline answers BuildKit's base-image lookups without the network: every
// base image is an empty linux image. The checks that need an image's real
// configuration (its platform, its environment) then say nothing.
type offline struct{}

func (offline) ResolveImageConfig(_ context.Context, ref string, _ sourceresolver.Opt) (string, digest.Digest, []byte, error) {
	return ref, "", []byte(`{"os":"linux","rootfs":{"type":"layers"}}`), nil
}
