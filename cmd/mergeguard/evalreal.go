package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review/budget"
	"github.com/mergeguard/mergeguard/review/codectx"
	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/review/eval"
	"github.com/mergeguard/mergeguard/review/pipeline"
	"github.com/mergeguard/mergeguard/review/task"
)

// runEvalReal is `mergeguard eval --real DIR --mirrors DIR`: it reviews
// every commit of the real-world set without a model, as `mergeguard
// review --base C^ --head C` does in a checkout of C made from the
// repository's bare clone in the mirrors directory, collects the code
// context a review with a model would have, scores both against the
// set's truth and prints the figures as markdown tables.
func runEvalReal(ctx context.Context, p *process, f evalFlags, cfg config.Config, getenv func(string) string, stdout, stderr io.Writer) error {
	cases, err := eval.LoadReal(f.real)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	if err := checkMirrors(f.mirrors, cases); err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "mergeguard-eval-real-")
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	defer func() { _ = os.RemoveAll(work) }()
	run := newRealRunner(p, cfg, getenv)
	clones := map[string]string{}
	results := make([]eval.RealResult, 0, len(cases))
	for _, c := range cases {
		dir, err := checkoutMirror(ctx, f.mirrors, work, clones, c)
		r := eval.RealResult{Repo: c.Repo, Commit: c.Commit}
		if err == nil {
			r = run.review(ctx, dir, c.Commit+"^", c.Commit, c)
		} else {
			r.Error = err.Error()
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("eval: %w", err)
		}
		results = append(results, r)
		fmt.Fprintf(stderr, "mergeguard: %s reviewed in %.2f s%s\n", r.ID(), float64(r.WallMS)/1000, errorSuffix(r.Error))
	}
	report := eval.RealReport{Summary: eval.SummarizeReal(results), Results: results}
	command := fmt.Sprintf("mergeguard eval --real %s --mirrors %s", f.real, f.mirrors)
	if err := eval.WriteRealMarkdown(stdout, report, command); err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	if f.out != "" {
		if err := writeFileAtomic(f.out, func(w io.Writer) error { return eval.WriteRealJSON(w, report) }); err != nil {
			return err
		}
	}
	if f.markdown != "" {
		return writeFileAtomic(f.markdown, func(w io.Writer) error { return eval.WriteRealMarkdown(w, report, command) })
	}
	return nil
}

func errorSuffix(e string) string {
	if e == "" {
		return ""
	}
	return ": " + e
}

// mirrorDir is where the bare clone of repo ("owner/name") is.
func mirrorDir(mirrors, repo string) string {
	return filepath.Join(mirrors, strings.ReplaceAll(repo, "/", "+"), "repo")
}

// checkMirrors refuses to start when a repository of the set has no bare
// clone in mirrors, and says how to make the missing ones.
func checkMirrors(mirrors string, cases []eval.RealCase) error {
	var missing []string
	seen := map[string]bool{}
	for _, c := range cases {
		if seen[c.Repo] {
			continue
		}
		seen[c.Repo] = true
		if _, err := os.Stat(filepath.Join(mirrorDir(mirrors, c.Repo), "HEAD")); err != nil {
			missing = append(missing, fmt.Sprintf("  git clone --bare https://github.com/%s %s", c.Repo, mirrorDir(mirrors, c.Repo)))
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("eval: --real needs a bare clone of each repository of the set in --mirrors %s; %d are missing, make them with:\n%s",
		mirrors, len(missing), strings.Join(missing, "\n"))
}

// checkoutMirror checks the case's commit out in a clone of its mirror
// under work (one clone per repository, sharing the mirror's objects, so
// that the mirror itself is never written) and returns the clone's
// directory.
func checkoutMirror(ctx context.Context, mirrors, work string, clones map[string]string, c eval.RealCase) (string, error) {
	dir, ok := clones[c.Repo]
	if !ok {
		dir = filepath.Join(work, strings.ReplaceAll(c.Repo, "/", "+"))
		if err := gitCmd(ctx, "", "clone", "-q", "--shared", "--no-checkout", mirrorDir(mirrors, c.Repo), dir); err != nil {
			return "", err
		}
		clones[c.Repo] = dir
	}
	if err := gitCmd(ctx, dir, "checkout", "-q", "-f", "--detach", c.Commit); err != nil {
		return "", err
	}
	return dir, gitCmd(ctx, dir, "clean", "-q", "-f", "-d", "-x")
}

// gitCmd runs git in dir ("" for the current directory).
func gitCmd(ctx context.Context, dir string, args ...string) error {
	cmd := exec.CommandContext(ctx, "git", args...) //nolint:gosec // fixed git subcommands on the set's pinned commits
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// realRunner reviews the commits of the real-world set without a model.
type realRunner struct {
	deps   pipeline.Deps
	repo   config.Repo
	getenv func(string) string
}

// newRealRunner builds the pipeline `mergeguard review` builds, without
// its model.
func newRealRunner(p *process, cfg config.Config, getenv func(string) string) realRunner {
	deps, _ := pipelineDeps(p, cfg.LLM, http.DefaultTransport, budget.NewCorrections(nil), nil, nil)
	deps.LLM = nil
	return realRunner{deps: deps, repo: cfg.Review, getenv: getenv}
}

// review reviews base..head of the checkout in dir as `mergeguard review
// --base base --head head` does (the same request: .mergeguard.yml at the
// base, the same pipeline), timing it, then collects the code context
// when the case has context truth, and scores both.
func (r realRunner) review(ctx context.Context, dir, base, head string, c eval.RealCase) eval.RealResult {
	fail := func(err error) eval.RealResult {
		return eval.RealResult{Repo: c.Repo, Commit: c.Commit, Error: err.Error()}
	}
	start := time.Now()
	req, _, _, err := reviewRequest(ctx, reviewFlags{base: base, head: head, dir: dir}, r.repo, config.GitHub{}, r.getenv, io.Discard)
	if err != nil {
		return fail(err)
	}
	res, err := pipeline.New(r.deps).Run(ctx, req)
	if err != nil {
		return fail(fmt.Errorf("review: %w", err))
	}
	if res.Skipped {
		return fail(fmt.Errorf("review skipped: %s", res.SkipReason))
	}
	o := eval.Observed{Findings: res.Verdict.Findings(), WallMS: time.Since(start).Milliseconds()}
	if c.Context != nil {
		if err := r.codeContext(ctx, req, &o); err != nil {
			return fail(err)
		}
	}
	return eval.ScoreReal(c, o)
}

// codeContext records in o the code context of the request's change, as
// a review with a model collects it, and the time it took.
func (r realRunner) codeContext(ctx context.Context, req task.Request, o *eval.Observed) error {
	text, err := req.Source.Diff(ctx)
	if err != nil {
		return fmt.Errorf("code context: %w", err)
	}
	d, err := diff.ParseString(text)
	if err != nil {
		return fmt.Errorf("code context: %w", err)
	}
	start := time.Now()
	res, err := pipeline.New(r.deps).CodeContext(ctx, req.Source, d, req.Repo)
	if err != nil {
		return fmt.Errorf("code context: %w", err)
	}
	o.ContextMS = time.Since(start).Milliseconds()
	for _, ss := range res.ByFile {
		o.Snippets = append(o.Snippets, ss...)
	}
	for _, f := range d.Files {
		for _, h := range f.Hunks {
			if h.NewLines > 0 {
				o.Hunks = append(o.Hunks, codectx.Snippet{Path: f.Path(), Start: int(h.NewStart), End: int(h.NewStart + h.NewLines - 1)})
			}
		}
	}
	return nil
}

// errNoMirrors is the usage error of --real without --mirrors.
var errNoMirrors = errors.New("eval: --real needs --mirrors DIR, a directory of bare clones DIR/OWNER+NAME/repo " +
	"(git clone --bare https://github.com/OWNER/NAME DIR/OWNER+NAME/repo)")
