// Package tools answers the tool calls of a reviewing model
// (docs/architecture.md): changed_files, get_commit_messages, diff_file,
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

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/diff"
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

// Toolbox answers tool calls for one review. It reads through the source,
// which caches for the review, and is safe for concurrent use.
type Toolbox struct {
	src  review.Source
	diff *diff.Diff
	// cfg bounds what the tools return (llm.tool_result_bytes,
	// tool_read_lines, tool_search_files) and makes Definitions strict
	// (llm.strict_tools).
	cfg config.LLM
}

// New returns the tools of a review reading from src, whose parsed diff is
// d (nil for an empty diff), bounded by cfg as loaded (config.Load).
func New(src review.Source, d *diff.Diff, cfg config.LLM) *Toolbox {
	if d == nil {
		d = &diff.Diff{}
	}
	return &Toolbox{src: src, diff: d, cfg: cfg}
}

// Call answers one tool call with the tool message for the model: a
// failure caused by the call is a message starting with "error: ". The
// error is non-nil only when ctx ended.
func (t *Toolbox) Call(ctx context.Context, name, argsJSON string) (string, error) {
	out, err := t.dispatch(ctx, name, argsJSON)
	if ctxErr := ctx.Err(); ctxErr != nil {
		return "", fmt.Errorf("tool %s: %w", name, ctxErr)
	}
	if err != nil {
		return "error: " + err.Error(), nil
	}
	return out, nil
}

func (t *Toolbox) dispatch(ctx context.Context, name, argsJSON string) (string, error) {
	a, err := parseArgs(argsJSON)
	if err != nil {
		return "", err
	}
	switch name {
	case ChangedFiles:
		return t.changedFiles(ctx)
	case CommitMessages:
		return t.commitMessages(ctx, a)
	case DiffFile:
		return t.diffFile(a)
	case ReadFilePart, GetFileContext:
		return t.readFilePart(ctx, a)
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
	return "", fmt.Errorf("unknown tool %q; the tools are %s", name, strings.Join(names, ", "))
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
