package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/budget"
	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/review/pipeline"
	"github.com/mergeguard/mergeguard/review/report"
	"github.com/mergeguard/mergeguard/review/source/difftext"
	"github.com/mergeguard/mergeguard/review/source/localgit"
	"github.com/mergeguard/mergeguard/review/task"
)

// Errors that make `mergeguard review` exit 1 after printing the verdict.
var (
	// errChangesRequested: --fail-on-changes and the verdict is request_changes.
	errChangesRequested = errors.New("changes requested")
	// errFailLevel: --fail-level and a reported finding at or above it.
	errFailLevel = errors.New("findings at or above the fail level")
	// errDegraded: --fail-on-degraded and the review was partial.
	errDegraded = errors.New("the review is partial")
)

// formats are the output formats of `mergeguard review`; the machine
// formats get the binary's version for SARIF's tool.driver.version.
func formats(toolVersion string) map[string]func(io.Writer, review.Verdict) error {
	return map[string]func(io.Writer, review.Verdict) error{
		"text": report.Text, "markdown": report.Markdown, "json": writeJSON,
		"sarif":  func(w io.Writer, v review.Verdict) error { return report.SARIF(w, v, toolVersion) },
		"rdjson": report.RDJSON, "line": report.Line,
	}
}

const formatNames = "text, json, markdown, sarif, rdjson or line"

// reviewFlags are the flags of `mergeguard review`.
type reviewFlags struct {
	base, head, dir, diffFile, config string
	workTree, staged                  bool
	pr, githubURL, login              string
	post                              bool
	render                            func(io.Writer, review.Verdict) error
	failOnChanges, failOnDegraded     bool
	failLevel                         review.Severity // "" for none
}

// parseReviewFlags parses and checks the flags of `mergeguard review`.
func parseReviewFlags(args []string, stderr io.Writer) (reviewFlags, error) {
	var f reviewFlags
	fs := newFlagSet("review", stderr)
	fs.StringVar(&f.base, "base", "", "base `revision` (default: the merge-base with the default branch); with --diff, the revision whose .mergeguard.yml applies")
	fs.StringVar(&f.head, "head", "", "head `revision` (default HEAD)")
	fs.StringVar(&f.dir, "repo", ".", "repository `directory`")
	fs.StringVar(&f.diffFile, "diff", "", "review a diff `file` (- for standard input) instead of revisions")
	fs.BoolVar(&f.workTree, "work-tree", false, "review the uncommitted changes of the working tree against HEAD (the default when there are some and no --base, --head or --diff)")
	fs.BoolVar(&f.staged, "staged", false, "review the staged changes (the index) against HEAD")
	fs.StringVar(&f.pr, "pr", "", "review a GitHub pull request, https://HOST/OWNER/REPO/pull/N, through the token in GITHUB_TOKEN")
	fs.BoolVar(&f.post, "post", false, "with --pr: post the review on the pull request as the token's account")
	fs.StringVar(&f.githubURL, "github-url", "", "with --pr: GitHub's REST API `address` (default GITHUB_API_URL, else the one of the pull request's host)")
	fs.StringVar(&f.login, "login", "", "with --post: the `login` the token posts as (default: GET /user; github-actions[bot] when GitHub refuses it)")
	format := fs.String("format", "text", "output `format`: "+formatNames)
	fs.BoolVar(&f.failOnChanges, "fail-on-changes", false, "exit 1 when the verdict is request_changes")
	failLevel := fs.String("fail-level", "none", "exit 1 when a reported finding is at least this `severity`: critical, warning, info, style or none")
	fs.BoolVar(&f.failOnDegraded, "fail-on-degraded", false, "exit 1 when the review is partial (an agent failed, the token budget ran out, a file was cut to fit)")
	configPath := configFlag(fs)
	rest, err := parseArgs(fs, args)
	if err != nil {
		return f, err
	}
	f.config = *configPath
	if len(rest) > 0 {
		return f, usageError{fmt.Errorf("review: unexpected argument %q", rest[0])}
	}
	var ok bool
	if f.render, ok = formats(buildInfo().version)[*format]; !ok {
		return f, usageError{fmt.Errorf("review: unknown format %q (want %s)", *format, formatNames)}
	}
	if *failLevel != "none" {
		if f.failLevel, err = review.ParseSeverity(*failLevel); err != nil {
			return f, usageError{fmt.Errorf("review: --fail-level: %w, or none", err)}
		}
	}
	return f, f.checkSources()
}

// checkSources refuses combinations of the flags that choose what to
// review.
func (f reviewFlags) checkSources() error {
	revs := f.base != "" || f.head != ""
	switch {
	case f.pr != "" && (revs || f.diffFile != "" || f.workTree || f.staged):
		return usageError{errors.New("review: --pr cannot be combined with --base, --head, --diff, --work-tree or --staged")}
	case f.pr == "" && (f.post || f.githubURL != "" || f.login != ""):
		return usageError{errors.New("review: --post, --github-url and --login need --pr")}
	case f.diffFile != "" && (f.head != "" || f.workTree || f.staged):
		return usageError{errors.New("review: --diff cannot be combined with --head, --work-tree or --staged")}
	case f.workTree && f.staged:
		return usageError{errors.New("review: --work-tree and --staged cannot be combined")}
	case (f.workTree || f.staged) && revs:
		return usageError{errors.New("review: --work-tree and --staged review against HEAD: they cannot be combined with --base or --head")}
	}
	return nil
}

// runReview is `mergeguard review`: it reviews the commits base..head of a
// local repository, its uncommitted or staged changes, a diff file, or a
// GitHub pull request (--pr, posted with --post), prints the verdict and
// fails as the --fail flags ask.
func runReview(ctx context.Context, p *process, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	f, err := parseReviewFlags(args, stderr)
	if err != nil {
		return err
	}
	cfg, err := loadConfig(f.config, getenv)
	if err != nil {
		return err
	}
	req, pr, note, err := reviewRequest(ctx, f, cfg.Review, cfg.GitHub, getenv, stderr)
	if err != nil {
		return err
	}
	if note != "" {
		fmt.Fprintln(stderr, "mergeguard:", note)
	}
	// No database here: the correction of a model without a known
	// tokenizer is learned for this run only, from the starting margin.
	deps, hasLLM := pipelineDeps(p, cfg.LLM, http.DefaultTransport, budget.NewCorrections(nil), nil, nil)
	if !hasLLM {
		fmt.Fprintln(stderr, "mergeguard: no LLM configured (set OPENAI_API_KEY, or OPENAI_BASE_URL for a local server): built-in analyzers only")
	}
	req.Sink = progress{w: stderr, live: isTerminal(stderr)}
	if f.pr == "" && req.Source != nil { // a local diff, already read
		if text, err := req.Source.Diff(ctx); err == nil {
			defer boundHeap(len(text), reviewFixed, reviewPerByte, true)()
		}
	}
	var res *task.Result
	var postErr error
	if f.post {
		res, postErr, err = pr.reviewAndPost(ctx, pipeline.New(deps), req, stderr)
	} else {
		res, err = pipeline.New(deps).Run(ctx, req)
	}
	switch {
	case errors.Is(err, task.ErrLLMUnavailable) && res != nil:
		// Degraded, not empty: the analyzers' findings are printed, and
		// --fail-on-degraded decides the exit status.
		fmt.Fprintln(stderr, "mergeguard: the model part of the review failed, the analyzers' findings follow:", err)
	case err != nil:
		return fmt.Errorf("review: %w", err)
	}
	if res.Skipped {
		fmt.Fprintln(stderr, "mergeguard: review skipped:", res.SkipReason)
	}
	if note != "" {
		res.Verdict.Notes = append(res.Verdict.Notes, note)
	}
	if err := f.render(stdout, res.Verdict); err != nil {
		return fmt.Errorf("review: write verdict: %w", err)
	}
	if postErr != nil {
		return fmt.Errorf("review: post: %w", postErr)
	}
	return f.failure(res)
}

// reviewRequest opens what the flags ask to review: a pull request
// (--pr, with its prReview for --post, through a client configured by gh)
// or a local change. note says where the .mergeguard.yml of a diff file's
// review came from ("" otherwise).
func reviewRequest(ctx context.Context, f reviewFlags, fallback config.Repo, gh config.GitHub, getenv func(string) string, stderr io.Writer) (task.Request, *prReview, string, error) {
	if f.pr != "" {
		pr, err := openPR(ctx, f, gh, getenv, stderr)
		if err != nil {
			return task.Request{}, nil, "", err
		}
		return pr.request(task.Request{Repo: fallback}), pr, "", nil
	}
	src, repo, note, err := openSource(ctx, f, fallback, getenv, stderr)
	return task.Request{Source: src, Repo: repo}, nil, note, err
}

// failure returns why the review fails under the --fail flags, nil when
// it does not; every reason that applies is joined.
func (f reviewFlags) failure(res *task.Result) error {
	var errs []error
	if f.failOnChanges && res.Verdict.Verdict == review.DecisionRequestChanges {
		errs = append(errs, errChangesRequested)
	}
	if f.failLevel != "" {
		n := 0
		for _, x := range res.Verdict.Findings() {
			if x.Severity.AtLeast(f.failLevel) {
				n++
			}
		}
		if n > 0 {
			errs = append(errs, fmt.Errorf("%w: %d finding(s) at %s or above", errFailLevel, n, f.failLevel))
		}
	}
	if f.failOnDegraded {
		if why := partial(res); len(why) > 0 {
			errs = append(errs, fmt.Errorf("%w: %s", errDegraded, strings.Join(why, "; ")))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("review: %w", errors.Join(errs...))
}

// partial says why a review is partial: an agent failed (the verdict is
// degraded; with an LLM configured this includes every model call
// failing), an agent reached its turn limit, the token budget ran out, or
// a file was cut to fit a chunk.
func partial(res *task.Result) []string {
	var why []string
	v := res.Verdict
	if v.Degraded {
		why = append(why, "an agent failed")
	}
	for _, a := range v.Agents {
		if a.Status == review.AgentTruncated {
			why = append(why, a.Agent+" reached its turn limit")
		}
	}
	if res.Skipped && res.Notice != "" {
		why = append(why, res.SkipReason)
	}
	if v.Truncation != nil && v.Truncation.Truncated {
		why = append(why, "files were cut to fit: "+strings.Join(v.Truncation.SectionsAffected, ", "))
	}
	return why
}

// openSource opens the change to review and its repository configuration:
// .mergeguard.yml at the base revision of a repository, or for a diff file
// as diffRepoFile finds it (note says which); the app configuration's
// review section when there is none. An empty change is an error with a
// hint.
func openSource(ctx context.Context, f reviewFlags, fallback config.Repo, getenv func(string) string, stderr io.Writer) (src review.Source, repo config.Repo, note string, err error) {
	var (
		repoYML []byte
		hint    string
	)
	if f.diffFile != "" {
		src, err = openDiffFile(ctx, f.diffFile, f.dir)
		if err == nil {
			repoYML, note, err = diffRepoFile(ctx, f, getenv)
		}
		hint = "the diff is empty: pass the output of `git diff` or `diff -u`"
	} else {
		var s *localgit.Source
		s, hint, err = openGit(ctx, f, stderr)
		if errors.Is(err, localgit.ErrNotRepository) {
			where := f.dir
			if where == "." {
				where = "the current directory"
			}
			return nil, config.Repo{}, "", fmt.Errorf("review: %s is not in a git repository: run mergeguard review inside one, "+
				"or pass --repo DIR, --diff FILE (- for standard input) or --pr URL", where)
		}
		if err != nil {
			return nil, config.Repo{}, "", fmt.Errorf("review: %w", err)
		}
		src = s
		repoYML, err = s.ReadFile(ctx, config.RepoFileName, review.Base)
		if err != nil && !errors.Is(err, review.ErrNotFound) {
			return nil, config.Repo{}, "", fmt.Errorf("review: read %s at the base revision: %w", config.RepoFileName, err)
		}
		err = nil
	}
	if err != nil {
		return nil, config.Repo{}, "", err
	}
	if files, err := src.Files(ctx); err != nil {
		return nil, config.Repo{}, "", fmt.Errorf("review: %w", err)
	} else if len(files) == 0 {
		return nil, config.Repo{}, "", fmt.Errorf("review: nothing to review: %s", hint)
	}
	if repoYML == nil {
		return src, fallback, note, nil
	}
	// As in the worker: the repository's file refines the operator's
	// review defaults. Its errors already name the file and line.
	if repo, err = config.ParseRepoOver(fallback, repoYML); err != nil {
		return nil, config.Repo{}, "", fmt.Errorf("review: %w", err)
	}
	return src, repo, note, nil
}

// openDiffFile reads a diff file (- for standard input). When dir is in a
// git repository, the work tree is the diff's head side wherever its files
// agree with the diff (difftext.WithTree): the linters then read modified
// files whole.
func openDiffFile(ctx context.Context, diffFile, dir string) (review.Source, error) {
	in := os.Stdin
	if diffFile != "-" {
		f, err := os.Open(diffFile)
		if err != nil {
			return nil, fmt.Errorf("review: read diff: %w", err)
		}
		defer func() { _ = f.Close() }() // read only: nothing to flush
		in = f
	}
	// Read once into the string the parsed lines point into.
	text, err := diff.ReadText(in)
	if err != nil {
		return nil, fmt.Errorf("review: read diff: %w", err)
	}
	restore := boundHeap(len(text), parseFixed, parsePerByte, false)
	src, err := difftext.New(text)
	restore()
	if err != nil {
		return nil, fmt.Errorf("review: %w", err)
	}
	if root, err := localgit.TopLevel(ctx, dir); err == nil {
		return src.WithTree(os.DirFS(root)), nil
	}
	return src, nil // a diff from nowhere: what it holds whole is read
}

// openGit opens the change of a repository that the flags choose: the
// working tree or the index against HEAD, or commits; with no revision
// flags, the working tree when it has uncommitted changes. hint says what
// to do when the change is empty.
func openGit(ctx context.Context, f reviewFlags, stderr io.Writer) (*localgit.Source, string, error) {
	workTree := f.workTree
	if !workTree && !f.staged && f.base == "" && f.head == "" {
		dirty, err := localgit.HasUncommitted(ctx, f.dir)
		if err != nil {
			return nil, "", err
		}
		if dirty {
			fmt.Fprintln(stderr, "mergeguard: reviewing the uncommitted changes of the working tree against HEAD (pass --base to review commits)")
			workTree = true
		}
	}
	switch {
	case f.staged:
		s, err := localgit.NewUncommitted(ctx, f.dir, localgit.Staged)
		return s, "no staged changes: stage some with `git add`, or use --work-tree", err
	case workTree:
		s, err := localgit.NewUncommitted(ctx, f.dir, localgit.WorkTree)
		return s, "no uncommitted changes to tracked files (untracked files are not reviewed: `git add -N` them)", err
	}
	s, err := localgit.New(ctx, f.dir, f.base, f.head)
	return s, "base and head have the same files: pass --base with an earlier revision", err
}

// writeJSON writes the verdict as the API's ReviewVerdict JSON.
func writeJSON(w io.Writer, v review.Verdict) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// progress reports a review's progress on stderr: on a terminal (live)
// each stage, each agent as it starts (a long linter shows which) and its
// result with its time; always, one final line with the review's time,
// findings and verdict, so that a CI log shows how long it took.
type progress struct {
	w    io.Writer
	live bool
}

// Emit implements review.Sink.
func (p progress) Emit(_ context.Context, e review.Event) {
	data, _ := e.Data.(map[string]any)
	switch {
	case e.Type == review.EventPipelineCompleted:
		ms, _ := data["duration_ms"].(int64)
		fmt.Fprintf(p.w, "mergeguard: reviewed in %s: %v finding(s), verdict %v\n",
			(time.Duration(ms) * time.Millisecond).Round(10*time.Millisecond), data["findings"], data["verdict"])
	case !p.live:
	case e.Type == review.EventAgentStarted && e.Agent == e.Stage:
		fmt.Fprintf(p.w, "mergeguard: %s…\n", e.Stage)
	case e.Type == review.EventAgentStarted:
		fmt.Fprintf(p.w, "mergeguard:   %s…\n", e.Agent)
	case e.Type == review.EventAgentHandoff:
		if res, ok := data["result"].(review.AgentResult); ok {
			fmt.Fprintf(p.w, "mergeguard:   %s: %s, %d finding(s), %s\n", res.Agent, res.Status, res.Issues,
				(time.Duration(res.ElapsedMS) * time.Millisecond).Round(10*time.Millisecond))
		} else if e.Agent == review.StagePlanner {
			fmt.Fprintf(p.w, "mergeguard:   %v files to review in %d chunk(s), %v skipped\n",
				data["files_reviewed"], len(asSlice(data["chunks"])), data["files_skipped"])
		}
	}
}

func asSlice(v any) []map[string]any {
	s, _ := v.([]map[string]any)
	return s
}
