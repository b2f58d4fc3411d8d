package pipeline

import (
	"strings"
	"testing"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/task"
)

func TestGate(t *testing.T) {
	pr := review.Change{Title: "Add uploader", Author: "dev", BaseRef: "main"}
	tests := map[string]struct {
		change   func(*review.Change)
		repo     func(*config.Repo)
		wantSkip bool
	}{
		"default reviews":        {},
		"disabled":               {repo: func(r *config.Repo) { r.Enabled = false }, wantSkip: true},
		"auto review off":        {repo: func(r *config.Repo) { r.AutoReview.Enabled = false }, wantSkip: true},
		"draft":                  {change: func(c *review.Change) { c.Draft = true }, wantSkip: true},
		"draft allowed":          {change: func(c *review.Change) { c.Draft = true }, repo: func(r *config.Repo) { r.AutoReview.Drafts = true }},
		"bot by suffix":          {change: func(c *review.Change) { c.Author = "dependabot[bot]" }, wantSkip: true},
		"bot allowed":            {change: func(c *review.Change) { c.AuthorBot = true }, repo: func(r *config.Repo) { r.AutoReview.Bots = true }},
		"base branch glob":       {change: func(c *review.Change) { c.BaseRef = "release/1.2" }, repo: func(r *config.Repo) { r.AutoReview.BaseBranches = []string{"main", "release/**"} }},
		"base branch not listed": {change: func(c *review.Change) { c.BaseRef = "dev" }, repo: func(r *config.Repo) { r.AutoReview.BaseBranches = []string{"main"} }, wantSkip: true},
		// Title keywords and skip labels skip the model only (ModelGate).
		"title keyword":     {change: func(c *review.Change) { c.Title = "wip: uploader" }},
		"wip inside a word": {change: func(c *review.Change) { c.Title = "Wipe stale sessions" }},
		"skip label":        {change: func(c *review.Change) { c.Labels = []string{"No-Review"} }, repo: func(r *config.Repo) { r.AutoReview.SkipLabels = []string{"no-review"} }},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c, r := pr, config.DefaultRepo()
			if tc.change != nil {
				tc.change(&c)
			}
			if tc.repo != nil {
				tc.repo(&r)
			}
			skip, reason := Gate(c, r)
			if skip != tc.wantSkip || (skip && reason == "") {
				t.Errorf("Gate = %v, %q; want skip %v", skip, reason, tc.wantSkip)
			}
		})
	}
}

func TestRunSkipsGatedAndOversizedChanges(t *testing.T) {
	src := &memSource{change: review.Change{Title: "WIP uploader"}, diff: readTestdata(t, "planted.diff"), head: plantedHead()}
	p := New(Deps{Config: testLLM()}) // the default counter, loaded for this pipeline alone
	// A title keyword skips the model only: the analyzers still find the
	// planted key and request changes.
	res, err := p.Run(t.Context(), task.Request{Source: src, Repo: config.DefaultRepo(), Automatic: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Skipped || res.ModelSkipped == "" || res.Verdict.Verdict != review.DecisionRequestChanges {
		t.Errorf("automatic WIP review: skipped %v, model skipped %q, verdict %s", res.Skipped, res.ModelSkipped, res.Verdict.Verdict)
	}
	// An explicit request ignores the auto_review gates.
	res, err = p.Run(t.Context(), task.Request{Source: src, Repo: config.DefaultRepo()})
	if err != nil || res.Skipped || res.Verdict.Verdict != review.DecisionRequestChanges {
		t.Fatalf("explicit review: err %v, skipped %v, verdict %s", err, res.Skipped, res.Verdict.Verdict)
	}
	// ...and is refused when MergeGuard is disabled.
	off := config.DefaultRepo()
	off.Enabled = false
	res, err = p.Run(t.Context(), task.Request{Source: src, Repo: off})
	if err != nil || !res.Skipped || !strings.Contains(res.SkipReason, "disabled") {
		t.Fatalf("explicit review with enabled: false: err %v, skipped %v (%q)", err, res.Skipped, res.SkipReason)
	}
	repo := config.DefaultRepo()
	repo.MaxFiles = 3
	src.change.Title = "Uploader"
	res, err = p.Run(t.Context(), task.Request{Source: src, Repo: repo, Automatic: true})
	if err != nil || res.Skipped || !strings.Contains(res.ModelSkipped, "max_files") || res.Verdict.Verdict != review.DecisionRequestChanges {
		t.Fatalf("4 files over max_files 3: err %v, skipped %v, model skipped %q, verdict %s", err, res.Skipped, res.ModelSkipped, res.Verdict.Verdict)
	}
}

// TestModelGate: title keywords match as words or tags, case-insensitively
// ("WIP" in "[WIP] x", "WIP: x", "x wip", never in "Wipe"), and with skip
// labels they skip the model review only.
func TestModelGate(t *testing.T) {
	tests := []struct {
		title  string
		labels []string
		want   bool
	}{
		{title: "Wipe stale sessions"},
		{title: "Add swipe gestures"},
		{title: "Wipro integration"},
		{title: "[WIP] x", want: true},
		{title: "WIP: x", want: true},
		{title: "wip x", want: true},
		{title: "Uploader (wip)", want: true},
		{title: "DO NOT MERGE: experiment", want: true},
		{title: "do not merge", want: true},
		{title: "Refactor [skip review]", want: true},
		{title: "Refactor [skip reviews]"},
		{title: "Uploader", labels: []string{"No-Review"}, want: true},
	}
	repo := config.DefaultRepo()
	repo.AutoReview.SkipLabels = []string{"no-review"}
	for _, tt := range tests {
		got := ModelGate(review.Change{Title: tt.title, Labels: tt.labels}, repo)
		if (got != "") != tt.want {
			t.Errorf("ModelGate(%q, %q) = %q, want skip %v", tt.title, tt.labels, got, tt.want)
		}
	}
}

// testLLM is the LLM configuration of the pipeline's tests: the default
// one (config.Default) without a model, prices, temperature or
// walkthrough, with what set changes.
func testLLM(set ...func(*config.LLM)) config.LLM {
	cfg := config.Default().LLM
	cfg.Model, cfg.Prices, cfg.Temperature, cfg.Walkthrough = "", nil, 0, false
	for _, f := range set {
		f(&cfg)
	}
	return cfg
}
