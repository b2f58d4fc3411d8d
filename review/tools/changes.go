package tools

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/review/text"
)

// changedFiles answers changed_files.
func (t *Toolbox) changedFiles(ctx context.Context) (string, error) {
	files, err := t.src.Files(ctx)
	if err != nil {
		return "", sourceError("listing the changed files", err)
	}
	if len(files) == 0 {
		return "No files changed.\n", nil
	}
	out := newOutput(t.cfg.ToolResultBytes)
	out.line(fmt.Sprintf("%s changed:", plural(len(files), "file", "files")))
	for i, f := range files {
		l := fmt.Sprintf("%-9s %s", f.Status, diff.ShowPath(f.Path))
		if f.OldPath != "" && f.OldPath != f.Path {
			l += " (from " + diff.ShowPath(f.OldPath) + ")"
		}
		l += fmt.Sprintf(" +%d -%d", f.Additions, f.Deletions)
		if f.PatchMissing {
			l += " [binary or too large: no diff]"
		}
		if !out.line(l) {
			out.note(fmt.Sprintf("[%d more files not shown]", len(files)-i))
			break
		}
	}
	return out.String(), nil
}

// commitMessages answers get_commit_messages.
func (t *Toolbox) commitMessages(ctx context.Context, a args) (string, error) {
	n, err := a.number("max_commits", 20, false)
	if err != nil {
		return "", err
	}
	n = min(max(n, 1), 100)
	commits, err := t.src.Commits(ctx, n)
	if err != nil {
		return "", sourceError("listing the commits", err)
	}
	if len(commits) == 0 {
		return "No commits.\n", nil
	}
	out := newOutput(t.cfg.ToolResultBytes)
	for i, c := range commits {
		msg := c.Message
		if len(msg) > maxMessageBytes {
			msg = text.PrefixBytes(msg, maxMessageBytes) + " [... message cut]"
		}
		block := fmt.Sprintf("%s %s %s\n    %s", shortSHA(c.SHA), c.Date.Format("2006-01-02"), c.Author,
			strings.ReplaceAll(strings.TrimSpace(msg), "\n", "\n    "))
		if !out.line(block) {
			out.note(fmt.Sprintf("[%d more commits not shown]", len(commits)-i))
			break
		}
	}
	return out.String(), nil
}

func shortSHA(sha string) string { return sha[:min(len(sha), 12)] }

// blame answers get_blame.
func (t *Toolbox) blame(ctx context.Context, a args) (string, error) {
	p, err := a.text("file_path", "", true)
	if err != nil {
		return "", err
	}
	if p, err = cleanPath(p, false); err != nil {
		return "", err
	}
	line, err := a.number("line_number", 0, true)
	if err != nil {
		return "", err
	}
	if line < 1 {
		return "", fmt.Errorf("line_number must be 1 or more, got %d", line)
	}
	b, err := t.src.Blame(ctx, p, line)
	if errors.Is(err, review.ErrNotFound) {
		return "", fmt.Errorf("no line %d in %s at the head revision (is the path right, and the line within the file?)", line, diff.ShowPath(p))
	}
	if err != nil {
		return "", sourceError("blame", err)
	}
	msg, _, _ := strings.Cut(strings.TrimSpace(b.Message), "\n")
	out := fmt.Sprintf("%s:%d was last changed by %s on %s in commit %s: %s\n",
		diff.ShowPath(p), line, b.Author, b.Date.Format("2006-01-02"), shortSHA(b.CommitSHA), msg)
	return out, nil
}

// diffFile answers diff_file.
func (t *Toolbox) diffFile(a args) (string, error) {
	p, err := a.text("file_path", "", true)
	if err != nil {
		return "", err
	}
	if p, err = cleanPath(p, false); err != nil {
		return "", err
	}
	ctxLines, err := a.number("context_lines", 3, false)
	if err != nil {
		return "", err
	}
	start, err := a.number("start_hunk", 1, false)
	if err != nil {
		return "", err
	}
	end, err := a.number("end_hunk", start+19, false)
	if err != nil {
		return "", err
	}
	f, ok := t.changedFile(p)
	if !ok {
		return "", t.notChanged(p)
	}
	page, total, err := diff.Paginate(f, start, end)
	if err != nil {
		return "", fmt.Errorf("%s has %s: %s", diff.ShowPath(p), plural(total, "hunk", "hunks"),
			strings.TrimPrefix(err.Error(), "paginate "+f.Path()+": "))
	}
	// Diffs are made with 3 lines of context; Render shows every context
	// line with MaxContext 0, so 0 is shown as 1.
	opts := diff.RenderOptions{MaxContext: min(max(ctxLines, 1), 3)}

	budget := t.cfg.ToolResultBytes - noteRoom
	text := diff.Render(page, opts)
	last := start + len(page.Hunks) - 1
	for len(text) > budget && len(page.Hunks) > 1 {
		page.Hunks = page.Hunks[:len(page.Hunks)-1]
		last--
		text = diff.Render(page, opts)
	}
	var notes []string
	if len(text) > budget {
		text = cutLines(text, budget)
		notes = append(notes, fmt.Sprintf("[hunk %d is too long to show whole; read_file_part shows the rest of the file]", start))
	}
	if total > 0 {
		text = fmt.Sprintf("Hunks %d-%d of %d:\n", start, last, total) + text
	}
	if total > last {
		notes = append(notes, fmt.Sprintf("[%s more: call diff_file with start_hunk=%d]", plural(total-last, "hunk", "hunks"), last+1))
	}
	if ctxLines > 3 {
		notes = append(notes, "[the diff has 3 context lines; read_file_part shows more of the file]")
	}
	for _, n := range notes {
		text += n + "\n"
	}
	return text, nil
}

// notChanged explains that a path is not in the diff, suggesting changed
// files with the same name.
func (t *Toolbox) notChanged(p string) error {
	var same []string
	for _, f := range t.diff.Files {
		if path.Base(f.Path()) == path.Base(p) {
			same = append(same, diff.ShowPath(f.Path()))
		}
	}
	msg := fmt.Sprintf("%s is not changed by this pull request (changed_files lists the changed files; read_file_part reads any file)", diff.ShowPath(p))
	if len(same) > 0 {
		msg += "; did you mean " + strings.Join(same, " or ") + "?"
	}
	return errors.New(msg)
}

// cutLines returns the lines of s that fit in n bytes.
func cutLines(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := strings.LastIndexByte(s[:n], '\n')
	if cut < 0 {
		return text.PrefixBytes(s, n) + "\n"
	}
	return s[:cut+1]
}
