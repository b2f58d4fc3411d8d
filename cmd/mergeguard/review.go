package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/pipeline"
	"github.com/mergeguard/mergeguard/review/report"
	"github.com/mergeguard/mergeguard/review/source/difftext"
	"github.com/mergeguard/mergeguard/review/source/localgit"
)

// errChangesRequested is returned by `mergeguard review --fail-on-changes`
// when the verdict is request_changes; the process exits 1.
var errChangesRequested = errors.New("changes requested")

// runReview is `mergeguard review`: it reviews the commits base..head of a
// local repository, or a diff file, and prints the verdict.
func runReview(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("review", stderr)
	base := fs.String("base", "", "base `revision` (default: the merge-base with the default branch)")
	head := fs.String("head", "", "head `revision` (default HEAD)")
	dir := fs.String("repo", ".", "repository `directory`")
	diffFile := fs.String("diff", "", "review a diff `file` (- for standard input) instead of revisions")
	format := fs.String("format", "text", "output `format`: text, json or markdown")
	failOnChanges := fs.Bool("fail-on-changes", false, "exit 1 when the verdict is request_changes")
	configPath := configFlag(fs)
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageError{fmt.Errorf("review: unexpected argument %q", rest[0])}
	}
	render, ok := map[string]func(io.Writer, review.Verdict) error{
		"text": report.Text, "markdown": report.Markdown, "json": writeJSON,
	}[*format]
	if !ok {
		return usageError{fmt.Errorf("review: unknown format %q (want text, json or markdown)", *format)}
	}
	if *diffFile != "" && (*base != "" || *head != "") {
		return usageError{errors.New("review: --diff cannot be combined with --base or --head")}
	}
	cfg, err := loadConfig(*configPath, getenv)
	if err != nil {
		return err
	}

	src, repo, err := openSource(ctx, *dir, *diffFile, *base, *head, cfg.Review)
	if err != nil {
		return err
	}
	deps, hasLLM := pipelineDeps(cfg.LLM, http.DefaultTransport)
	if !hasLLM {
		fmt.Fprintln(stderr, "mergeguard: no LLM configured (set OPENAI_API_KEY, or OPENAI_BASE_URL for a local server): built-in analyzers only")
	}
	var sink review.Sink = review.Discard{}
	if isTerminal(stderr) {
		sink = progress{w: stderr}
	}
	res, err := pipeline.New(deps).Run(ctx, pipeline.Request{Source: src, Repo: repo, Sink: sink})
	if err != nil {
		return fmt.Errorf("review: %w", err)
	}
	if res.Skipped {
		fmt.Fprintln(stderr, "mergeguard: review skipped:", res.SkipReason)
	}
	if err := render(stdout, res.Verdict); err != nil {
		return fmt.Errorf("review: write verdict: %w", err)
	}
	if *failOnChanges && res.Verdict.Verdict == review.DecisionRequestChanges {
		return fmt.Errorf("review: %w", errChangesRequested)
	}
	return nil
}

// openSource opens the change to review and its repository configuration:
// .mergeguard.yml at the base revision of a repository, or in the
// repository directory for a diff file; the app configuration's review
// section when there is none.
func openSource(ctx context.Context, dir, diffFile, base, head string, fallback config.Repo) (review.Source, config.Repo, error) {
	var (
		src     review.Source
		repoYML []byte
	)
	if diffFile != "" {
		var text []byte
		var err error
		if diffFile == "-" {
			text, err = io.ReadAll(os.Stdin)
		} else {
			text, err = os.ReadFile(diffFile)
		}
		if err != nil {
			return nil, config.Repo{}, fmt.Errorf("review: read diff: %w", err)
		}
		s, err := difftext.New(string(text))
		if err != nil {
			return nil, config.Repo{}, fmt.Errorf("review: %w", err)
		}
		src = s
		repoYML, err = os.ReadFile(filepath.Join(dir, config.RepoFileName))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, config.Repo{}, fmt.Errorf("review: read %s: %w", config.RepoFileName, err)
		}
	} else {
		s, err := localgit.New(ctx, dir, base, head)
		if err != nil {
			return nil, config.Repo{}, fmt.Errorf("review: %w", err)
		}
		src = s
		repoYML, err = s.ReadFile(ctx, config.RepoFileName, review.Base)
		if err != nil && !errors.Is(err, review.ErrNotFound) {
			return nil, config.Repo{}, fmt.Errorf("review: read %s at the base revision: %w", config.RepoFileName, err)
		}
	}
	if repoYML == nil {
		return src, fallback, nil
	}
	// As in the worker: the repository's file refines the operator's
	// review defaults. Its errors already name the file and line.
	repo, err := config.ParseRepoOver(fallback, repoYML)
	if err != nil {
		return nil, config.Repo{}, fmt.Errorf("review: %w", err)
	}
	return src, repo, nil
}

// writeJSON writes the verdict as the API's ReviewVerdict JSON.
func writeJSON(w io.Writer, v review.Verdict) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// progress prints one line per pipeline stage and agent to a terminal.
type progress struct{ w io.Writer }

// Emit implements review.Sink.
func (p progress) Emit(_ context.Context, e review.Event) {
	switch e.Type {
	case review.EventAgentStarted:
		if e.Agent == e.Stage {
			fmt.Fprintf(p.w, "mergeguard: %s…\n", e.Stage)
		}
	case review.EventAgentHandoff:
		data, _ := e.Data.(map[string]any)
		if res, ok := data["result"].(review.AgentResult); ok {
			fmt.Fprintf(p.w, "mergeguard:   %s: %s, %d finding(s)\n", res.Agent, res.Status, res.Issues)
		} else if e.Agent == review.StagePlanner {
			fmt.Fprintf(p.w, "mergeguard:   %v files to review in %d chunk(s), %v skipped\n",
				data["files_reviewed"], len(asSlice(data["chunks"])), data["files_skipped"])
		}
	case review.EventPipelineCompleted:
		fmt.Fprintln(p.w, "mergeguard: done")
	}
}

func asSlice(v any) []map[string]any {
	s, _ := v.([]map[string]any)
	return s
}
