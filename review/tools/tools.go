// Package tools answers the tool calls of a reviewing model (DESIGN.md
// section 3): changed_files, get_commit_messages, diff_file,
// read_file_part (alias get_file_context), get_blame, search_in_files and
// list_files. Tools are read-only and answered by a review.Source.
//
// A tool never fails a review because of what the model asked: an unknown
// tool, malformed arguments, a path outside the repository, a missing file
// or a bad range come back as a result starting with "error: " that the
// model can read and act on. Only the end of the context is an error.
// Results are bounded in size and say when they were cut.
package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/diff"
)

// Limits applied when Options leaves them zero.
const (
	DefaultMaxResultBytes = 16 << 10
	DefaultMaxReadLines   = 400
	DefaultMaxSearchFiles = 1000
)

// Other bounds, fixed.
const (
	maxLineBytes     = 1000    // a longer line is cut when shown
	maxSearchBytes   = 1 << 20 // larger files are not searched
	maxPatternLen    = 1000
	maxGlobLen       = 300
	maxListed        = 500
	maxMessageBytes  = 2000 // of one commit message
	searchReadGroups = 8    // files read concurrently by search_in_files
)

// Options bound what the tools return.
type Options struct {
	// MaxResultBytes bounds one result; 16 KiB when zero.
	MaxResultBytes int
	// MaxReadLines bounds the lines read_file_part returns; 400 when zero.
	MaxReadLines int
	// MaxSearchFiles bounds the files search_in_files reads; 1000 when zero.
	MaxSearchFiles int
	// Strict makes Definitions use OpenAI's strict schemas.
	Strict bool
}

// Result is the answer to one tool call.
type Result struct {
	// Output is the tool message for the model.
	Output string
	// Summary is one short line for the tool.called event, such as
	// "read_file_part src/main.go:1-120 (head)".
	Summary string
	// Error is set when Output is an "error: " message.
	Error bool
}

// Stats counts the calls a Toolbox answered.
type Stats struct {
	Calls  int            `json:"calls"`
	Errors int            `json:"errors"`
	ByTool map[string]int `json:"by_tool"`
}

// Toolbox answers tool calls for one review. It caches what it reads from
// the source and is safe for concurrent use.
type Toolbox struct {
	src  review.Source
	diff *diff.Diff
	opts Options

	mu    sync.Mutex
	files map[string]fileEntry // rev + "\x00" + path
	list  []string             // nil until listed
	stats Stats
}

type fileEntry struct {
	data []byte
	err  error // review.ErrNotFound: cached too
}

// New returns the tools of a review reading from src, whose parsed diff is
// d (nil for an empty diff).
func New(src review.Source, d *diff.Diff, opts Options) *Toolbox {
	if d == nil {
		d = &diff.Diff{}
	}
	if opts.MaxResultBytes <= 0 {
		opts.MaxResultBytes = DefaultMaxResultBytes
	}
	if opts.MaxReadLines <= 0 {
		opts.MaxReadLines = DefaultMaxReadLines
	}
	if opts.MaxSearchFiles <= 0 {
		opts.MaxSearchFiles = DefaultMaxSearchFiles
	}
	return &Toolbox{src: src, diff: d, opts: opts, files: map[string]fileEntry{}, stats: Stats{ByTool: map[string]int{}}}
}

// Call answers one tool call with the tool message for the model. The
// error is non-nil only when ctx ended.
func (t *Toolbox) Call(ctx context.Context, name, argsJSON string) (string, error) {
	r, err := t.Run(ctx, name, argsJSON)
	return r.Output, err
}

// Run answers one tool call, with a summary for the tool.called event.
// The error is non-nil only when ctx ended; every other failure is a
// Result with Error set.
func (t *Toolbox) Run(ctx context.Context, name, argsJSON string) (Result, error) {
	out, summary, err := t.dispatch(ctx, name, argsJSON)
	if ctxErr := ctx.Err(); ctxErr != nil {
		return Result{}, fmt.Errorf("tool %s: %w", name, ctxErr)
	}
	r := Result{Output: out, Summary: summary}
	if err != nil {
		r = Result{Output: "error: " + err.Error(), Error: true}
		r.Summary = name + ": " + firstLine(r.Output)
	}
	t.mu.Lock()
	t.stats.Calls++
	t.stats.ByTool[name]++
	if r.Error {
		t.stats.Errors++
	}
	t.mu.Unlock()
	return r, nil
}

// Stats returns the calls answered so far.
func (t *Toolbox) Stats() Stats {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := Stats{Calls: t.stats.Calls, Errors: t.stats.Errors, ByTool: make(map[string]int, len(t.stats.ByTool))}
	for k, v := range t.stats.ByTool {
		s.ByTool[k] = v
	}
	return s
}

func (t *Toolbox) dispatch(ctx context.Context, name, argsJSON string) (out, summary string, err error) {
	a, err := parseArgs(argsJSON)
	if err != nil {
		return "", "", err
	}
	switch name {
	case ChangedFiles:
		return t.changedFiles(ctx)
	case CommitMessages:
		return t.commitMessages(ctx, a)
	case DiffFile:
		return t.diffFile(a)
	case ReadFilePart, GetFileContext:
		return t.readFilePart(ctx, name, a)
	case GetBlame:
		return t.blame(ctx, a)
	case SearchInFiles:
		return t.search(ctx, a)
	case ListFiles:
		return t.listFiles(ctx, a)
	}
	names := make([]string, 0, len(defs()))
	for _, d := range defs() {
		names = append(names, d.name)
	}
	return "", "", fmt.Errorf("unknown tool %q; the tools are %s", name, strings.Join(names, ", "))
}

// read returns a file's content through the cache.
func (t *Toolbox) read(ctx context.Context, path string, rev review.Revision) ([]byte, error) {
	key := string(rev) + "\x00" + path
	t.mu.Lock()
	e, ok := t.files[key]
	t.mu.Unlock()
	if ok {
		return e.data, e.err
	}
	data, err := t.src.ReadFile(ctx, path, rev)
	if err != nil && !errors.Is(err, review.ErrNotFound) {
		return nil, err // not cached: it may work next time
	}
	t.mu.Lock()
	t.files[key] = fileEntry{data: data, err: err}
	t.mu.Unlock()
	return data, err
}

// repoFiles lists the files at head through the cache.
func (t *Toolbox) repoFiles(ctx context.Context) ([]string, error) {
	t.mu.Lock()
	list := t.list
	t.mu.Unlock()
	if list != nil {
		return list, nil
	}
	list, err := t.src.ListFiles(ctx)
	if err != nil {
		return nil, err
	}
	if list == nil {
		list = []string{}
	}
	t.mu.Lock()
	t.list = list
	t.mu.Unlock()
	return list, nil
}

// changedFile finds the file of the diff at path, new or old.
func (t *Toolbox) changedFile(path string) (*diff.File, bool) {
	for _, f := range t.diff.Files {
		if f.NewPath == path {
			return f, true
		}
	}
	for _, f := range t.diff.Files {
		if f.OldPath == path {
			return f, true
		}
	}
	return nil, false
}

// sourceError words a failure of the source for the model.
func sourceError(what string, err error) error {
	if errors.Is(err, review.ErrUnsupported) {
		return fmt.Errorf("%s is not available for this review (only the diff is known)", what)
	}
	return fmt.Errorf("%s failed: %w", what, err)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 200 {
		s = cutString(s, 200) + "..."
	}
	return s
}
