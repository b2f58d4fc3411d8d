package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/review/lint"
)

// maxLintFiles bounds the files one linter reads whole in a review; the
// rest are named in a note.
const maxLintFiles = 100

// runLinter runs one linter as an agent over the files it applies to,
// each read whole at the head revision. It returns the agent's outcome and
// the notes for the review (files it could not read, checks it could not
// run).
func (r *run) runLinter(ctx context.Context, l lint.Linter, scan []*diff.File) (analyzed, []string) {
	name := l.Name()
	sniffer, _ := l.(lint.Sniffer)
	var mine, maybe []*diff.File
	for _, f := range scan {
		switch {
		case f.Binary || f.Status == diff.Deleted:
		case l.Applies(f.Path()):
			mine = append(mine, f)
		case sniffer != nil && sniffer.MayApply(f.Path()):
			maybe = append(maybe, f)
		}
	}
	sniffed := r.sniff(ctx, sniffer, maybe)
	if len(mine)+len(sniffed) == 0 {
		return analyzed{}, nil
	}
	r.emit(ctx, review.EventAgentStarted, review.StageReviewer, name, map[string]any{"files": len(mine) + len(sniffed)})
	start := time.Now()
	files, notes, unchecked := r.readWhole(ctx, name, mine)
	r.lintUnchecked.Add(int64(unchecked))
	files = append(files, sniffed...)
	var rep lint.Report
	var err error
	if len(files) > 0 {
		rep, err = l.Lint(ctx, files, sourceTree{r.req.Source})
	}
	notes = append(notes, rep.Notes...)
	res := review.AgentResult{Agent: name, Stage: review.StageReviewer, Status: review.AgentSuccess,
		Issues: len(rep.Findings), ElapsedMS: time.Since(start).Milliseconds()}
	if err != nil {
		res.Status, res.Error, res.ErrorType = review.AgentError, err.Error(), "analyzer"
		notes = append(notes, fmt.Sprintf("%s did not finish: %v", strings.TrimPrefix(name, review.AnalyzerPrefix), err))
	}
	for i := range rep.Findings {
		rep.Findings[i].Agent = name
		r.emitFinding(ctx, review.EventFindingDetected, review.StageReviewer, name, rep.Findings[i])
	}
	r.emitAgentDone(ctx, res)
	return analyzed{result: res, findings: rep.Findings}, notes
}

// readWhole reads files at the head revision, at most maxLintFiles of
// them and each at most lint.MaxFileBytes. A file added whole by the diff
// needs no read: the diff holds it (so a diff without a repository is
// linted too). It returns the files read, the notes on the others, and
// how many others there are.
func (r *run) readWhole(ctx context.Context, name string, fs []*diff.File) ([]lint.File, []string, int) {
	var out []lint.File
	var unread, large int
	short := strings.TrimPrefix(name, review.AnalyzerPrefix)
	for i, f := range fs {
		if i == maxLintFiles {
			notes := append(notesOf(short, unread, large), fmt.Sprintf("%s: checked the first %d files of %d.", short, maxLintFiles, len(fs)))
			return out, notes, unread + large + len(fs) - maxLintFiles
		}
		b, err := r.req.Source.ReadFile(ctx, f.Path(), review.Head)
		if errors.Is(err, review.ErrNotFound) && f.Status == diff.Added {
			b, err = []byte(f.AddedText()), nil // the diff holds it all
		}
		switch {
		case err != nil:
			unread++
		case len(b) > lint.MaxFileBytes:
			large++
		default:
			out = append(out, lint.File{Diff: f, Content: b})
		}
	}
	return out, notesOf(short, unread, large), unread + large
}

// sniff reads whole the files a linter may check by their content and
// keeps those it checks. A file it cannot read is not one of them, and
// needs no note: nothing says it was a file of the linter's.
func (r *run) sniff(ctx context.Context, s lint.Sniffer, fs []*diff.File) []lint.File {
	if len(fs) == 0 {
		return nil
	}
	files, _, _ := r.readWhole(ctx, s.Name(), fs)
	var out []lint.File
	for _, f := range files {
		if s.AppliesContent(f.Content) {
			out = append(out, f)
		}
	}
	return out
}

// notesOf says how many files a linter could not read or skipped as too
// large.
func notesOf(name string, unread, large int) []string {
	var out []string
	if unread > 0 {
		out = append(out, fmt.Sprintf("%s: %d files could not be read whole at the head revision and were not checked.", name, unread))
	}
	if large > 0 {
		out = append(out, fmt.Sprintf("%s: %d files over %d KiB were not checked.", name, large, lint.MaxFileBytes>>10))
	}
	return out
}

// sourceTree is the head revision of a review's Source, for linters.
type sourceTree struct{ src review.Source }

func (t sourceTree) ReadFile(ctx context.Context, path string) ([]byte, error) {
	return t.src.ReadFile(ctx, path, review.Head)
}

func (t sourceTree) ListFiles(ctx context.Context) ([]string, error) { return t.src.ListFiles(ctx) }
