package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review/budget"
	"github.com/mergeguard/mergeguard/review/eval"
	"github.com/mergeguard/mergeguard/review/llm"
)

// evalFlags are the flags of `mergeguard eval`.
type evalFlags struct {
	dataset, martianDiffs, config      string
	out, markdown                      string
	real, mirrors                      string
	judgeModel, judgeBaseURL           string
	tolerance, parallel                int
	resume, contextOnly, analyzersOnly bool
}

// parseEvalFlags parses and checks the flags of `mergeguard eval`.
func parseEvalFlags(args []string, stderr io.Writer) (evalFlags, error) {
	var f evalFlags
	fs := newFlagSet("eval", stderr)
	fs.StringVar(&f.martianDiffs, "martian-diffs", "", "the dataset is Martian's golden-comment JSON; its diffs are in this `directory` (OWNER-REPO-N.diff or N.diff)")
	fs.StringVar(&f.out, "out", "", "write the report as JSON to `file` (rewritten as each case finishes)")
	fs.StringVar(&f.markdown, "markdown", "", "write the report as markdown to `file`")
	fs.StringVar(&f.judgeModel, "judge-model", "", "match findings to golden comments with this judge `model` instead of by location")
	fs.StringVar(&f.judgeBaseURL, "judge-base-url", "", "the judge's OpenAI-compatible `address` (default: the reviewer's, OPENAI_BASE_URL); its key is MERGEGUARD_JUDGE_API_KEY, else OPENAI_API_KEY")
	fs.IntVar(&f.tolerance, "line-tolerance", eval.DefaultLineTolerance, "`lines` a finding may be off a golden comment's range and still match it")
	fs.IntVar(&f.parallel, "parallel", 4, "cases reviewed at once")
	fs.BoolVar(&f.resume, "resume", false, "skip the cases already scored in the --out file")
	fs.BoolVar(&f.contextOnly, "context-only", false, "measure context recall without a model: whether each case's first prompt holds its context_lines")
	fs.BoolVar(&f.analyzersOnly, "analyzers-only", false, "review with the built-in analyzers only, even when a model is configured")
	fs.StringVar(&f.real, "real", "", "review the real-world set in `directory` (testdata/eval-real) without a model and score it against its truth; needs --mirrors")
	fs.StringVar(&f.mirrors, "mirrors", "", "with --real: `directory` of bare clones of the set's repositories, OWNER+NAME/repo")
	configPath := configFlag(fs)
	rest, err := parseArgs(fs, args)
	if err != nil {
		return f, err
	}
	f.config = *configPath
	if f.real != "" || f.mirrors != "" {
		return f, f.checkReal(rest)
	}
	switch {
	case len(rest) != 1:
		return f, usageError{errors.New("eval: want one dataset: a JSONL file of cases, a corpus directory, or Martian's JSON with --martian-diffs")}
	case f.parallel < 1 || f.tolerance < 0:
		return f, usageError{errors.New("eval: --parallel must be at least 1 and --line-tolerance at least 0")}
	case f.resume && f.out == "":
		return f, usageError{errors.New("eval: --resume needs --out")}
	case f.contextOnly && f.judgeModel != "":
		return f, usageError{errors.New("eval: --context-only runs no model: it cannot be combined with --judge-model")}
	}
	f.dataset = rest[0]
	return f, nil
}

// checkReal checks the flags of `mergeguard eval --real`.
func (f evalFlags) checkReal(rest []string) error {
	switch {
	case f.real == "":
		return usageError{errors.New("eval: --mirrors needs --real")}
	case f.mirrors == "":
		return usageError{errNoMirrors}
	case len(rest) != 0:
		return usageError{fmt.Errorf("eval: --real takes no dataset, got %q", rest[0])}
	case f.martianDiffs != "" || f.judgeModel != "" || f.contextOnly || f.analyzersOnly || f.resume:
		return usageError{errors.New("eval: --real reviews without a model and measures the context itself: " +
			"it cannot be combined with --martian-diffs, --judge-model, --context-only, --analyzers-only or --resume")}
	}
	return nil
}

// runEval is `mergeguard eval`: it reviews every case of a dataset, scores
// the findings against the golden comments and prints the figures.
func runEval(ctx context.Context, p *process, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	f, err := parseEvalFlags(args, stderr)
	if err != nil {
		return err
	}
	cfg, err := loadConfig(f.config, getenv)
	if err != nil {
		return err
	}
	if f.real != "" {
		return runEvalReal(ctx, p, f, cfg, getenv, stdout, stderr)
	}
	cases, err := loadDataset(f)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	opt, settings := evalOptions(p, f, cfg, getenv, stderr)
	if opt.Judge == nil && !f.contextOnly {
		if n := unlocated(cases); n > 0 {
			fmt.Fprintf(stderr, "mergeguard: %d golden comment(s) have no file or line: only a judge (--judge-model) can match them\n", n)
		}
	}
	done, err := resumed(f, settings)
	if err != nil {
		return err
	}
	opt.Done = done
	report := eval.Report{Settings: settings}
	start := time.Now()
	opt.OnResult = func(r eval.CaseResult) error {
		done[r.ID] = r
		if f.out == "" {
			return nil
		}
		report.Cases = ordered(cases, done)
		report.Summary = eval.Summarize(report.Cases)
		report.Settings.ElapsedMS = time.Since(start).Milliseconds()
		return writeFileAtomic(f.out, func(w io.Writer) error { return eval.WriteJSON(w, report) })
	}
	results, err := eval.Run(ctx, cases, opt)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	report.Cases, report.Summary = results, eval.Summarize(results)
	report.Settings.ElapsedMS = time.Since(start).Milliseconds()
	return writeEvalReport(f, report, stdout)
}

// loadDataset reads the cases of the dataset the flags name.
func loadDataset(f evalFlags) ([]eval.Case, error) {
	if f.martianDiffs != "" {
		data, err := os.ReadFile(f.dataset)
		if err != nil {
			return nil, fmt.Errorf("read dataset: %w", err)
		}
		return eval.ParseMartian(data, f.martianDiffs)
	}
	st, err := os.Stat(f.dataset)
	if err != nil {
		return nil, fmt.Errorf("read dataset: %w", err)
	}
	if st.IsDir() {
		return eval.LoadCorpus(f.dataset)
	}
	data, err := os.ReadFile(f.dataset)
	if err != nil {
		return nil, fmt.Errorf("read dataset: %w", err)
	}
	return eval.ParseJSONL(data, filepath.Dir(f.dataset))
}

// evalOptions wires the reviewer and the judge from the configuration.
func evalOptions(p *process, f evalFlags, cfg config.Config, getenv func(string) string, stderr io.Writer) (eval.Options, eval.Settings) {
	deps, hasLLM := pipelineDeps(p, cfg.LLM, http.DefaultTransport, budget.NewCorrections(nil), nil, nil)
	if f.analyzersOnly || f.contextOnly {
		deps.LLM, hasLLM = nil, false
	}
	settings := eval.Settings{Dataset: f.dataset, JudgeModel: f.judgeModel, LineTolerance: f.tolerance, ContextOnly: f.contextOnly}
	if hasLLM {
		settings.Model = cfg.LLM.Model
	} else if !f.contextOnly {
		fmt.Fprintln(stderr, "mergeguard: no model (set OPENAI_API_KEY, or OPENAI_BASE_URL for a local server): built-in analyzers only")
	}
	opt := eval.Options{Deps: deps, Repo: cfg.Review, Tolerance: f.tolerance, Parallel: f.parallel, ContextOnly: f.contextOnly}
	if f.judgeModel == "" {
		return opt, settings
	}
	base := cmp.Or(f.judgeBaseURL, cfg.LLM.BaseURL)
	key := cmp.Or(getenv("MERGEGUARD_JUDGE_API_KEY"), cfg.LLM.APIKey.Value())
	client := llm.New(llm.Config{BaseURL: base, APIKey: key, Model: f.judgeModel, Timeout: cfg.LLM.Timeout, MaxRetries: 3},
		&http.Client{Transport: http.DefaultTransport}, llm.WithBackoff(cfg.LLM.RetryBase, cfg.LLM.RetryMax))
	opt.Judge = eval.LLMJudge{Client: client, Model: f.judgeModel, Prices: cfg.LLM.Prices}
	return opt, settings
}

// resumed returns the cases already scored in the --out file with
// --resume (those that ended in an error are run again). A file written
// with another model, judge, tolerance or mode is refused: its figures
// would not add up with the new ones.
func resumed(f evalFlags, now eval.Settings) (map[string]eval.CaseResult, error) {
	done := map[string]eval.CaseResult{}
	if !f.resume {
		return done, nil
	}
	data, err := os.ReadFile(f.out)
	if errors.Is(err, os.ErrNotExist) {
		return done, nil
	}
	if err != nil {
		return nil, fmt.Errorf("eval: --resume: %w", err)
	}
	prev, err := eval.ReadJSON(data)
	if err != nil {
		return nil, fmt.Errorf("eval: --resume %s: %w", f.out, err)
	}
	if p := prev.Settings; p.Model != now.Model || p.JudgeModel != now.JudgeModel || p.LineTolerance != now.LineTolerance || p.ContextOnly != now.ContextOnly {
		return nil, fmt.Errorf("eval: --resume %s: it was written by another evaluation (model %q, judge %q, tolerance %d, context only %v); write to another --out",
			f.out, p.Model, p.JudgeModel, p.LineTolerance, p.ContextOnly)
	}
	for _, r := range prev.Cases {
		if r.Error == "" {
			done[r.ID] = r
		}
	}
	return done, nil
}

// unlocated counts the golden comments without a file or line.
func unlocated(cases []eval.Case) int {
	n := 0
	for _, c := range cases {
		for _, g := range c.Golden {
			if s, _ := g.Lines(); g.File == "" || s == 0 {
				n++
			}
		}
	}
	return n
}

// ordered lists the results of done in the order of cases.
func ordered(cases []eval.Case, done map[string]eval.CaseResult) []eval.CaseResult {
	var out []eval.CaseResult
	for _, c := range cases {
		if r, ok := done[c.ID]; ok {
			out = append(out, r)
		}
	}
	return out
}

// writeEvalReport prints the tables and writes the files the flags ask
// for.
func writeEvalReport(f evalFlags, r eval.Report, stdout io.Writer) error {
	if err := eval.WriteText(stdout, r); err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	if f.out != "" {
		if err := writeFileAtomic(f.out, func(w io.Writer) error { return eval.WriteJSON(w, r) }); err != nil {
			return err
		}
	}
	if f.markdown != "" {
		if err := writeFileAtomic(f.markdown, func(w io.Writer) error { return eval.WriteMarkdown(w, r) }); err != nil {
			return err
		}
	}
	return nil
}

// writeFileAtomic writes path through a temporary file renamed over it,
// so that an interrupted run leaves the previous report whole.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("eval: write %s: %w", path, err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }() //nolint:gosec // the operator's own --out or --markdown file
	if err := write(tmp); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("eval: write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("eval: write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil { //nolint:gosec // the operator's own --out or --markdown file
		return fmt.Errorf("eval: write %s: %w", path, err)
	}
	return nil
}
