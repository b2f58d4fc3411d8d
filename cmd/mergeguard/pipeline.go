package main

import (
	gobuild "go/build"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/budget"
	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/review/gomod"
	"github.com/mergeguard/mergeguard/review/lint"
	"github.com/mergeguard/mergeguard/review/lint/buildcheck"
	"github.com/mergeguard/mergeguard/review/llm"
	"github.com/mergeguard/mergeguard/review/pipeline"
	"github.com/mergeguard/mergeguard/review/tools"
)

// countMemoBytes bounds the prompt texts whose counts the process keeps
// (budget.Memo).
const countMemoBytes = 64 << 20

// pipelineDeps builds the review pipeline's dependencies from the LLM
// configuration, for `review` and `serve` alike, with the tokenizers and
// standard library of the process p. transport carries the LLM
// calls (serve wraps it with metrics). hasLLM is false when no LLM is
// configured: the pipeline then runs the built-in analyzers only.
//
// A model without a known tokenizer is counted with o200k_base, its ASCII
// and non-ASCII parts each corrected by what is learned from its server's
// reported prompt tokens (budget.Corrections): corr holds it, taught by
// the LLM client after every call and, when tokens is not nil (serve),
// kept in and shared through the database; onError is told when the
// database fails.
func pipelineDeps(p *process, cfg config.LLM, transport http.RoundTripper, corr *budget.Corrections,
	tokens budget.CorrectionStore, onError func(error)) (deps pipeline.Deps, hasLLM bool) {
	tk := p.tokenizers
	counter := tk.ForModel(cfg.Model)
	// o200k_base's counts of the prompts, split by script, shared by the
	// pipeline and the LLM client that learns the correction from them.
	base := budget.NewMemo(tk.Base(cfg.Model), countMemoBytes)
	if budget.EncodingForModel(cfg.Model) == "" && corr != nil {
		counter = budget.Corrected(base, cfg.Model, corr)
	}
	std := p.std
	// An experiment arm's model is counted with its tokenizer, or with
	// o200k_base corrected by what its server teaches.
	counterFor := func(model string) pipeline.Counter { return tk.ForModelCorrected(model, corr) }
	deps = pipeline.Deps{
		Config: cfg, Counter: counter, CounterFor: counterFor, Linters: linters(std), GoStd: std, Analyzers: p.analyzers,
		Tools: func(src review.Source, d *diff.Diff) pipeline.Toolbox {
			return tools.New(src, d, cfg)
		},
	}
	if !cfg.Configured() {
		return deps, false
	}
	// Each attempt has its own timeout (llm.Config.Timeout); the client
	// itself has none so retries are not cut short.
	client := llm.New(llm.Config{BaseURL: cfg.BaseURL, APIKey: cfg.APIKey.Value(), Model: cfg.Model,
		Timeout: cfg.Timeout, MaxRetries: 3, Azure: cfg.APIType == "azure", APIVersion: cfg.APIVersion},
		&http.Client{Transport: transport}, llm.WithBackoff(cfg.RetryBase, cfg.RetryMax))
	deps.LLM = llm.NewCalibrator(client, llm.Calibration{
		Model: cfg.Model, Base: base, Corrections: corr, Store: tokens, OnError: onError,
	})
	return deps, true
}

// linters are the linters every review runs: with shellcheck when it is on
// PATH, and with std, the Go standard library's types (nil: Go code is
// checked untyped).
func linters(std *gomod.Std) []lint.Linter {
	shellcheck, err := exec.LookPath("shellcheck")
	if err != nil {
		shellcheck = ""
	}
	return lint.Default(shellcheck, std, buildcheck.Run)
}

// goStd returns the Go standard library's types, shared by every review of
// the process (go vet and the code context), from the go command's export
// data when a go command is installed (on PATH or in the Go installation
// this binary was built with), else from the Go installation's sources
// when they are on this machine; nil when neither is.
func goStd() *gomod.Std {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		if goCmd, err = exec.LookPath(filepath.Join(gobuild.Default.GOROOT, "bin", "go")); err != nil {
			goCmd = ""
		}
	}
	_, err = os.Stat(filepath.Join(gobuild.Default.GOROOT, "src", "fmt"))
	if goCmd == "" && err != nil {
		return nil
	}
	return gomod.NewStd(goCmd, err == nil)
}
