package main

import (
	gobuild "go/build"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/agent"
	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/review/lint"
	"github.com/mergeguard/mergeguard/review/llm"
	"github.com/mergeguard/mergeguard/review/pipeline"
	"github.com/mergeguard/mergeguard/review/tools"
)

// pipelineDeps builds the review pipeline's dependencies from the LLM
// configuration, for `review` and `serve` alike. transport carries the LLM
// calls (serve wraps it with metrics). hasLLM is false when no LLM is
// configured: the pipeline then runs the built-in analyzers only.
func pipelineDeps(cfg config.LLM, transport http.RoundTripper) (deps pipeline.Deps, hasLLM bool) {
	deps = pipeline.Deps{
		Model: cfg.Model, ContextTokens: cfg.ContextTokens, MaxOutputTokens: cfg.MaxOutputTokens,
		MaxChunkTokens: cfg.MaxChunkTokens, MaxChunks: cfg.MaxChunks, AgentTimeout: cfg.AgentTimeout,
		Concurrency: cfg.Concurrency, MaxTurns: cfg.MaxTurns, Prices: cfg.Prices,
		Temperature: float32(cfg.Temperature), ResponseFormat: agent.ResponseFormat(cfg.ResponseFormat),
		Walkthrough: cfg.Walkthrough, Linters: linters(),
		Tools: func(src review.Source, d *diff.Diff) pipeline.Toolbox {
			return tools.New(src, d, tools.Options{Strict: cfg.StrictTools,
				MaxResultBytes: cfg.ToolResultBytes, MaxReadLines: cfg.ToolReadLines, MaxSearchFiles: cfg.ToolSearchFiles})
		},
	}
	if !cfg.Configured() {
		return deps, false
	}
	// Each attempt has its own timeout (llm.Config.Timeout); the client
	// itself has none so retries are not cut short.
	deps.LLM = llm.New(llm.Config{BaseURL: cfg.BaseURL, APIKey: cfg.APIKey.Value(), Model: cfg.Model,
		Timeout: cfg.Timeout, MaxRetries: 3, Azure: cfg.APIType == "azure", APIVersion: cfg.APIVersion},
		&http.Client{Transport: transport})
	return deps, true
}

// linters are the linters every review runs: with shellcheck when it is on
// PATH, and type-checking the Go standard library from source when the Go
// installation's sources are on this machine.
func linters() []lint.Linter {
	shellcheck, err := exec.LookPath("shellcheck")
	if err != nil {
		shellcheck = ""
	}
	_, err = os.Stat(filepath.Join(gobuild.Default.GOROOT, "src", "fmt"))
	return lint.Default(shellcheck, err == nil)
}
