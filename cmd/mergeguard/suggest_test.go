package main

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/github/markdown"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/analyzer"
	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/review/eval"
	"github.com/mergeguard/mergeguard/review/llm"
	"github.com/mergeguard/mergeguard/review/llm/llmtest"
	"github.com/mergeguard/mergeguard/review/pipeline"
	"github.com/mergeguard/mergeguard/review/task"
)

// suggestionKind is one kind of suggestion the scripted model proposes on
// a target line of every changed file: a valid one, which must be posted
// as a suggestion block, or a broken one, which must not.
type suggestionKind struct {
	name  string
	valid bool
	// min is the fewest targets of the corpus the kind must be offered on.
	min int
	// make returns the claimed lines and the suggestion for a target, ok
	// false when the target does not allow this kind.
	make func(tg target) (start, end int, code string, ok bool)
}

// target is the line of a changed file the scripted model suggests on:
// an added line of code (Line) whose next line (in the same hunk) has a
// word in it, HunkEnd the hunk's last head line.
type target struct {
	Path          string
	Line, HunkEnd int
	Lines         []string // the file at the head
}

func (tg target) at(n int) string { return tg.Lines[n-1] }

var suggestionKinds = []suggestionKind{
	{"valid one-line", true, 50, func(tg target) (int, int, string, bool) {
		return tg.Line, tg.Line, tg.at(tg.Line), true
	}},
	{"valid multi-line", true, 50, func(tg target) (int, int, string, bool) {
		return tg.Line, tg.Line + 1, tg.at(tg.Line) + "\n" + tg.at(tg.Line+1), true
	}},
	{"broken brackets", false, 50, func(tg target) (int, int, string, bool) {
		return tg.Line, tg.Line, tg.at(tg.Line) + " ((", true
	}},
	{"broken indentation", false, 50, func(tg target) (int, int, string, bool) {
		l := tg.at(tg.Line)
		text := strings.TrimLeft(l, " \t")
		switch lead := l[:len(l)-len(text)]; {
		case strings.Contains(lead, "\t"):
			return tg.Line, tg.Line, strings.ReplaceAll(lead, "\t", "    ") + text, true
		case lead != "":
			return tg.Line, tg.Line, "\t" + text, true
		}
		return tg.Line, tg.Line, "  " + text, true
	}},
	{"broken range: repeats the next line", false, 50, func(tg target) (int, int, string, bool) {
		return tg.Line, tg.Line, tg.at(tg.Line) + "\n" + tg.at(tg.Line+1), true
	}},
	{"broken range: past the hunk", false, 5, func(tg target) (int, int, string, bool) {
		end := tg.HunkEnd + 3
		if end > len(tg.Lines) {
			return 0, 0, "", false
		}
		return tg.Line, end, strings.Join(tg.Lines[tg.Line-1:end], "\n"), true
	}},
}

// noteKind matches the figures of a note, to count notes by kind.
var noteKind = regexp.MustCompile(`\d+`)

// suggestionLine marks a suggestion block in a comment.
var suggestionLine = regexp.MustCompile("(?m)^`{3,}suggestion$")

// TestSuggestionsOnCorpus: a scripted model proposes, on every case of the
// seeded corpus, on a line of code of every changed file, valid
// suggestions (one line, two lines) and broken ones (unbalanced
// brackets, wrong indentation, lines outside the claimed range); each kind
// is one run over the corpus. Reviewed by the pipeline and placed by the
// publisher's plan, no broken suggestion is posted as a suggestion block
// and every valid one is (docs/quality.md, Suggestions that apply).
func TestSuggestionsOnCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: the whole corpus six times, about 3 s; skipped by -short, make test runs it")
	}
	cases, err := eval.LoadCorpus(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	reasons := make([]map[string]int, len(suggestionKinds)) // the notes of each kind, digits as N
	for k := range reasons {
		reasons[k] = map[string]int{}
	}
	deps := suggestDeps{analyzers: testProcess.analyzers, counter: testProcess.tokenizers.ForModel("gpt-4o-mini")} // both slow to build: the process's
	type count struct{ offered, blocks, inline int }
	counts := make([]count, len(suggestionKinds))
	for _, c := range cases {
		src, cleanup, err := eval.OpenSource(t.Context(), c, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		tgs := targets(t.Context(), t, src)
		for k, kind := range suggestionKinds {
			o, b, i := suggestOnCase(t, c.ID, src, tgs, kind, deps, reasons[k])
			counts[k] = count{counts[k].offered + o, counts[k].blocks + b, counts[k].inline + i}
		}
		cleanup()
	}
	for k, kind := range suggestionKinds {
		n := counts[k]
		t.Logf("%-36s offered %3d, posted inline %3d, as a suggestion block %3d; not applied: %v", kind.name, n.offered, n.inline, n.blocks, reasons[k])
		switch {
		case n.offered < kind.min:
			t.Errorf("%s: offered on %d targets, want %d at least", kind.name, n.offered, kind.min)
		case kind.valid && (n.blocks != n.offered || n.inline != n.offered):
			t.Errorf("%s: %d of %d posted inline, %d as suggestion blocks; want every one", kind.name, n.inline, n.offered, n.blocks)
		case !kind.valid && n.blocks != 0:
			t.Errorf("%s: %d of %d posted as suggestion blocks, want none", kind.name, n.blocks, n.offered)
		}
	}
}

// suggestDeps are what every review of the test shares.
type suggestDeps struct {
	analyzers []analyzer.Analyzer
	counter   pipeline.Counter
}

// suggestOnCase reviews one case with the scripted model proposing one
// kind of suggestion on every target, and returns how many it offered,
// how many were posted as suggestion blocks and how many inline; it counts
// the notes of those posted inline in reasons.
func suggestOnCase(t *testing.T, id string, src review.Source, tgs []target, kind suggestionKind, deps suggestDeps, reasons map[string]int) (offered, blocks, inline int) {
	t.Helper()
	ctx := t.Context()
	findings := map[string]map[string]any{} // by path
	for _, tg := range tgs {
		start, end, code, ok := kind.make(tg)
		if !ok {
			continue
		}
		f := modelFinding(tg.Path, start, end, "warning", "bug", kind.name+" suggestion")
		f["suggestion"] = code
		findings[tg.Path] = f
		offered++
	}
	srv := llmtest.New(t, func(r llmtest.Request) llmtest.Response {
		var out []any
		for _, m := range fileLine.FindAllStringSubmatch(r.LastMessage().Content, -1) {
			if f, ok := findings[m[1]]; ok {
				out = append(out, f)
			}
		}
		return llmtest.JSON(map[string]any{"findings": append([]any{}, out...), "positive_notes": []any{}})
	})
	cfg := config.Default().LLM
	cfg.Model, cfg.BaseURL, cfg.Walkthrough = "gpt-4o-mini", srv.URL(), false
	p := pipeline.New(pipeline.Deps{Config: cfg, LLM: llm.New(llm.Config{BaseURL: srv.URL(), Model: cfg.Model}, nil),
		Counter: deps.counter, Analyzers: deps.analyzers})
	res, err := p.Run(ctx, task.Request{Source: src, Repo: config.DefaultRepo()})
	if err != nil {
		t.Fatalf("%s: %v", id, err)
	}
	post := review.Post{Number: 1, HeadSHA: res.Change.HeadSHA, RunID: "run-1", Verdict: res.Verdict,
		Findings: res.Verdict.Findings(), Index: res.Index}
	for _, it := range markdown.PlanReview(post, "https://github.com/o/r/pull/1", nil, 1000).Items {
		if it.Finding.Title != kind.name+" suggestion" || it.Comment == nil {
			continue
		}
		inline++
		if n := it.Finding.SuggestionNote; n != "" {
			reasons[noteKind.ReplaceAllString(n, "N")]++
		}
		if suggestionLine.MatchString(it.Comment.Body) {
			blocks++
		} else if kind.valid {
			t.Logf("%s: %s:%d-%d not posted as a suggestion block: %s", id, it.Finding.FilePath, it.Finding.LineStart, it.Finding.LineEnd, it.Finding.SuggestionNote)
		}
	}
	return offered, blocks, inline
}

// targets finds, in every file the change adds or modifies, the first
// added line of code whose next line is in the same hunk and has a word
// in it.
func targets(ctx context.Context, t *testing.T, src review.Source) []target {
	t.Helper()
	text, err := src.Diff(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d, err := diff.ParseString(text)
	if err != nil {
		t.Fatal(err)
	}
	var out []target
	for _, f := range d.Files {
		if f.Status == diff.Deleted || f.Binary {
			continue
		}
		b, err := src.ReadFile(ctx, f.Path(), review.Head)
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		if tg, ok := firstTarget(f, lines); ok {
			out = append(out, tg)
		}
	}
	return out
}

func firstTarget(f *diff.File, lines []string) (target, bool) {
	for _, h := range f.Hunks {
		end := h.NewStart + h.NewLines - 1
		for _, l := range h.Lines {
			n := int(l.NewLine)
			if l.Kind != diff.Add || n >= end || !codeLine(lines[n-1]) || !regexp.MustCompile(`\w`).MatchString(lines[n]) {
				continue
			}
			return target{Path: f.Path(), Line: n, HunkEnd: end, Lines: lines}, true
		}
	}
	return target{}, false
}

// codeLine reports whether a line is plain code: not blank, no comment,
// no string literal, so that " ((" after it is a syntax error in every
// language of the corpus.
func codeLine(l string) bool {
	s := strings.TrimSpace(l)
	return s != "" && !strings.ContainsAny(s, "\"'`#@*") && !strings.Contains(s, "//") && !strings.HasSuffix(s, "\\")
}
