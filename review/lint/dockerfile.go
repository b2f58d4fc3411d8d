package lint

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/mergeguard/mergeguard/review"
)

// Dockerfile checks Dockerfiles with BuildKit's build checks, the rules
// `docker build --check` runs (Checks): stage and keyword casing,
// undefined ARGs and variables, relative WORKDIRs, shell-form commands
// where JSON is recommended, deprecated instructions, secrets passed in
// ARG or ENV, and more; and with the common hadolint rules beside them (an
// untagged or latest base image, apt-get without -y or
// --no-install-recommends, pip's cache, sudo, cd, a download piped into a
// shell: see dockerrules.go). Nothing is built and no image is pulled.
type Dockerfile struct {
	// Checks runs BuildKit's build checks (package buildcheck's Run);
	// nil checks only the hadolint rules, and says so in a note.
	Checks BuildChecks
}

// BuildChecks runs BuildKit's build checks on the Dockerfile at path,
// content. An error means the checks could not run at all; a Dockerfile
// BuildKit cannot build is BuildCheck.Error.
type BuildChecks func(ctx context.Context, path string, content []byte) (BuildCheck, error)

// BuildCheck is what BuildKit's build checks found in one Dockerfile.
type BuildCheck struct {
	Warnings []BuildWarning
	// Error is why BuildKit cannot build the file ("" when it can), and
	// ErrorLine the line it names (0 for none).
	Error     string
	ErrorLine int
}

// BuildWarning is one rule of BuildKit's build checks broken at a line
// (0 for the whole file).
type BuildWarning struct {
	Rule, Detail, URL string
	Line              int
}

// noBuildChecks is the note of a Dockerfile linter without Checks.
const noBuildChecks = "dockerfile: BuildKit's build checks are not part of this build; the best-practice rules were checked"

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
	if d.Checks == nil && len(files) > 0 {
		rep.Notes = append(rep.Notes, noBuildChecks)
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

// lint runs BuildKit's checks and the best-practice rules on one file. A
// file BuildKit cannot parse is reported as one finding at the line it
// names.
func (d Dockerfile) lint(ctx context.Context, f File, ignored []string) ([]review.Finding, error) {
	var res BuildCheck
	if d.Checks != nil {
		var err error
		if res, err = d.Checks(ctx, f.Path(), f.Content); err != nil {
			return nil, err
		}
	}
	var out []review.Finding
	for _, w := range res.Warnings {
		sev, cat, conf := review.SeverityStyle, review.CategoryQuality, exact
		switch w.Rule {
		case "SecretsUsedInArgOrEnv":
			// A name that looks like a secret's is a guess.
			sev, cat, conf = review.SeverityWarning, review.CategorySecurity, heuristic
		case "UndefinedVar", "UndefinedArgInFrom", "InvalidDefaultArgInFrom", "DuplicateStageName",
			"ReservedStageName", "WorkdirRelativePath", "CopyIgnoredFile", "InvalidBaseImagePlatform":
			sev, cat = review.SeverityWarning, review.CategoryBug
		}
		desc := fmt.Sprintf("%s\n\nReported by BuildKit's build check %s (%s).", w.Detail, w.Rule, w.URL)
		fd := finding(d.Name(), f, w.Line, sev, cat, conf, title(w.Detail), desc)
		fd.Rule = w.Rule
		out = append(out, fd)
	}
	if res.Error != "" {
		out = append(out, finding(d.Name(), f, res.ErrorLine, review.SeverityWarning, review.CategoryBug, exact,
			title(res.Error), res.Error+"\n\nBuildKit cannot build this Dockerfile."))
		return out, nil // BuildKit's parse error says it all
	}
	hits, err := bestPractices(f.Content, ignored)
	if err != nil {
		if d.Checks == nil {
			return nil, err // nothing checked the file: Lint notes it
		}
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
