package tools

import (
	"context"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/review/lang"
	"github.com/mergeguard/mergeguard/review/text"
)

// readFilePart answers read_file_part and get_file_context.
func (t *Toolbox) readFilePart(ctx context.Context, a args) (string, error) {
	p, err := a.text("file_path", "", true)
	if err != nil {
		return "", err
	}
	if p, err = cleanPath(p, false); err != nil {
		return "", err
	}
	branch, err := a.text("branch", "head", false)
	if err != nil {
		return "", err
	}
	rev := review.Revision(strings.ToLower(strings.TrimSpace(branch)))
	if rev != review.Head && rev != review.Base {
		return "", fmt.Errorf("branch must be \"head\" or \"base\", got %q", text.Clip(branch, 80))
	}
	start, err := a.number("start_line", 1, false)
	if err != nil {
		return "", err
	}
	end, err := a.number("end_line", start+t.cfg.ToolReadLines-1, false)
	if err != nil {
		return "", err
	}

	data, err := t.src.ReadFile(ctx, p, rev)
	if errors.Is(err, review.ErrNotFound) {
		return "", t.notFound(p, rev)
	}
	if err != nil {
		return "", sourceError("reading "+p, err)
	}
	if diff.IsBinary(data) {
		return "", fmt.Errorf("%s is a binary file (%d bytes) at %s: its content cannot be shown", diff.ShowPath(p), len(data), rev)
	}
	lines, crlf := splitLines(string(data))
	total := len(lines)
	header := fmt.Sprintf("File: %s (%s revision", diff.ShowPath(p), rev)
	if l := lang.Detect(p); l != "" {
		header += ", language " + l
	}
	header += fmt.Sprintf(", total_lines %d", total)
	if crlf {
		header += ", CRLF line endings"
	}
	header += ")"
	if total == 0 {
		return header + "\nThe file is empty.\n", nil
	}
	switch {
	case start < 1:
		return "", fmt.Errorf("start_line must be 1 or more, got %d", start)
	case start > total:
		return "", fmt.Errorf("start_line %d is past the end of %s, which has %d lines", start, diff.ShowPath(p), total)
	case end < start:
		return "", fmt.Errorf("end_line %d is before start_line %d", end, start)
	}
	var notes []string
	if end > total {
		end = total
	}
	if end-start+1 > t.cfg.ToolReadLines {
		end = start + t.cfg.ToolReadLines - 1
		notes = append(notes, fmt.Sprintf("[at most %d lines per call: lines %d-%d shown; call again with start_line=%d for more]",
			t.cfg.ToolReadLines, start, end, end+1))
	}

	out := newOutput(t.cfg.ToolResultBytes)
	out.line(header)
	out.line(fmt.Sprintf("Lines %d-%d of %d:", start, end, total))
	width := len(strconv.Itoa(end))
	shown := start - 1
	for i := start; i <= end; i++ {
		if !out.line(fmt.Sprintf("%*d  %s", width, i, showLine(lines[i-1]))) {
			notes = []string{fmt.Sprintf("[output limit reached: lines %d-%d shown; call again with start_line=%d for more]",
				start, shown, shown+1)}
			break
		}
		shown = i
	}
	for _, n := range notes {
		out.note(n)
	}
	return out.String(), nil
}

// notFound explains a file missing at rev, with a hint when the diff knows
// more.
func (t *Toolbox) notFound(p string, rev review.Revision) error {
	f, changed := t.changedFile(p)
	switch {
	case changed && rev == review.Head && f.Status == diff.Deleted:
		return fmt.Errorf("%s was deleted by this change: it exists only at branch \"base\"", diff.ShowPath(p))
	case changed && rev == review.Base && f.Status == diff.Added:
		return fmt.Errorf("%s was added by this change: it exists only at branch \"head\"", diff.ShowPath(p))
	case changed && rev == review.Head && f.Status == diff.Renamed && f.OldPath == p:
		return fmt.Errorf("%s was renamed to %s by this change", diff.ShowPath(p), diff.ShowPath(f.NewPath))
	case changed:
		return fmt.Errorf("the full content of %s is not available for this review; diff_file shows its changed hunks", diff.ShowPath(p))
	}
	return fmt.Errorf("file not found at %s: %s (list_files shows the repository's files)", rev, diff.ShowPath(p))
}

// globMatcher returns a matcher for a glob: a glob without '/' matches a
// path's base name, any other the whole path. An empty glob matches all.
func globMatcher(glob string) (func(string) bool, error) {
	glob = strings.TrimPrefix(strings.TrimSpace(glob), "./")
	switch {
	case glob == "":
		return func(string) bool { return true }, nil
	case len(glob) > maxGlobLen:
		return nil, fmt.Errorf("the glob is longer than %d characters", maxGlobLen)
	case !doublestar.ValidatePattern(glob):
		return nil, fmt.Errorf("invalid glob %q", text.Clip(glob, 80))
	case !strings.Contains(glob, "/"):
		return func(p string) bool { return doublestar.MatchUnvalidated(glob, path.Base(p)) }, nil
	}
	return func(p string) bool { return doublestar.MatchUnvalidated(glob, p) }, nil
}

// listFiles answers list_files.
func (t *Toolbox) listFiles(ctx context.Context, a args) (string, error) {
	dir, err := a.text("directory", ".", false)
	if err != nil {
		return "", err
	}
	if dir, err = cleanPath(dir, true); err != nil {
		return "", err
	}
	glob, err := a.text("pattern", "", false)
	if err != nil {
		return "", err
	}
	match, err := globMatcher(glob)
	if err != nil {
		return "", err
	}
	all, err := t.src.ListFiles(ctx)
	if err != nil {
		return "", sourceError("listing files", err)
	}
	var found []string
	for _, p := range all {
		if (dir == "." || p == dir || strings.HasPrefix(p, dir+"/")) && match(p) {
			found = append(found, p)
		}
	}
	where := "the repository"
	if dir != "." {
		where = dir
	}
	if glob != "" {
		where += " matching " + glob
	}
	if len(found) == 0 {
		return fmt.Sprintf("No files in %s.\n", where), nil
	}
	out := newOutput(t.cfg.ToolResultBytes)
	out.line(fmt.Sprintf("%s in %s:", plural(len(found), "file", "files"), where))
	shown := 0
	for _, p := range found {
		if shown == maxListed || !out.line(diff.ShowPath(p)) {
			break
		}
		shown++
	}
	if shown < len(found) {
		out.note(fmt.Sprintf("[%d more not shown: narrow the directory or pattern]", len(found)-shown))
	}
	return out.String(), nil
}

// search answers search_in_files.
func (t *Toolbox) search(ctx context.Context, a args) (string, error) {
	pattern, err := a.text("pattern", "", true)
	if err != nil {
		return "", err
	}
	if pattern == "" || len(pattern) > maxPatternLen {
		return "", fmt.Errorf("pattern must be 1 to %d characters", maxPatternLen)
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return "", fmt.Errorf("invalid regular expression (RE2 syntax): %w", err)
	}
	glob, err := a.text("file_pattern", "", false)
	if err != nil {
		return "", err
	}
	match, err := globMatcher(glob)
	if err != nil {
		return "", err
	}
	radius, err := a.number("context_lines", 2, false)
	if err != nil {
		return "", err
	}
	radius = min(max(radius, 0), 10)
	maxResults, err := a.number("max_results", 50, false)
	if err != nil {
		return "", err
	}
	maxResults = min(max(maxResults, 1), 200)

	all, err := t.src.ListFiles(ctx)
	if err != nil {
		return "", sourceError("listing files", err)
	}
	candidates := t.searchOrder(all, match)
	scanned := candidates[:min(len(candidates), t.cfg.ToolSearchFiles)]
	if p, ok := t.src.(preloader); ok && len(scanned) > searchReadGroups {
		// Best effort: when the source cannot preload (an archive too
		// large), files are read one by one.
		_ = p.Preload(ctx)
	}

	out := newOutput(t.cfg.ToolResultBytes)
	matches, filesWithMatches, skipped, unreadable := 0, 0, 0, 0
	full := false
	for start := 0; start < len(scanned) && matches < maxResults && !full; start += searchReadGroups {
		batch := scanned[start:min(start+searchReadGroups, len(scanned))]
		contents := make([][]byte, len(batch))
		unknown := make([]bool, len(batch))
		var wg sync.WaitGroup
		for i, p := range batch {
			wg.Go(func() {
				b, err := t.src.ReadFile(ctx, p, review.Head)
				contents[i], unknown[i] = b, err != nil
			})
		}
		wg.Wait()
		if err := ctx.Err(); err != nil {
			return "", err
		}
		for i, p := range batch {
			b := contents[i]
			if unknown[i] {
				unreadable++
				continue
			}
			if len(b) > maxSearchBytes || diff.IsBinary(b) {
				skipped++
				continue
			}
			n, ok := grep(out, p, string(b), re, radius, maxResults-matches)
			matches += n
			if n > 0 {
				filesWithMatches++
			}
			if !ok {
				full = true
				break
			}
			if matches >= maxResults {
				break
			}
		}
	}

	found := fmt.Sprintf("%s in %s", plural(matches, "match", "matches"), plural(filesWithMatches, "file", "files"))
	foot := fmt.Sprintf("[%s; %d of %d files searched", found, len(scanned), len(candidates))
	if skipped > 0 {
		foot += fmt.Sprintf(", %d binary or over 1 MiB skipped", skipped)
	}
	if unreadable > 0 {
		foot += fmt.Sprintf(", %d whose content is not available", unreadable)
	}
	foot += "]"
	switch {
	case full:
		foot += "\n[output limit reached: narrow the pattern or file_pattern]"
	case matches >= maxResults:
		foot += fmt.Sprintf("\n[stopped at max_results=%d]", maxResults)
	case len(scanned) < len(candidates):
		foot += "\n[not every file was searched: narrow file_pattern]"
	}
	if matches == 0 {
		return "No matches.\n" + foot + "\n", nil
	}
	out.note(foot)
	return out.String(), nil
}

// preloader is a Source that can fetch every head file at once, such as
// the GitHub source from the repository archive: search_in_files asks it
// before reading many files.
type preloader interface {
	Preload(ctx context.Context) error
}

// searchOrder lists the files to search: the changed files first, then
// the others in order.
func (t *Toolbox) searchOrder(all []string, match func(string) bool) []string {
	changed := map[string]bool{}
	var out []string
	for _, f := range t.diff.Files {
		if f.Status != diff.Deleted && !changed[f.NewPath] && match(f.NewPath) && slices.Contains(all, f.NewPath) {
			changed[f.NewPath] = true
			out = append(out, f.NewPath)
		}
	}
	for _, p := range all {
		if !changed[p] && match(p) {
			out = append(out, p)
		}
	}
	return out
}

// grep writes up to limit matches of re in content, grep -n style with
// radius lines of context ("path:12:" for matches, "path-11-" for
// context, "--" between groups). It returns the matches written and false
// when the output filled up.
func grep(out *output, p, content string, re *regexp.Regexp, radius, limit int) (int, bool) {
	lines, _ := splitLines(content)
	n := 0
	last := -1 // last line index written
	for i, l := range lines {
		if n == limit {
			break
		}
		if !re.MatchString(l) {
			continue
		}
		from := max(i-radius, last+1, 0)
		if last >= 0 && from > last+1 {
			if !out.line("--") {
				return n, false
			}
		}
		for j := from; j < i; j++ {
			if !out.line(fmt.Sprintf("%s-%d-%s", diff.ShowPath(p), j+1, showLine(lines[j]))) {
				return n, false
			}
		}
		if !out.line(fmt.Sprintf("%s:%d:%s", diff.ShowPath(p), i+1, showLine(l))) {
			return n, false
		}
		n++
		last = i
		// Trailing context stops before the next match, which prints itself.
		for j := i + 1; j <= min(i+radius, len(lines)-1) && !re.MatchString(lines[j]); j++ {
			if !out.line(fmt.Sprintf("%s-%d-%s", diff.ShowPath(p), j+1, showLine(lines[j]))) {
				return n, false
			}
			last = j
		}
	}
	if n > 0 && !out.full {
		out.line("--")
	}
	return n, true
}
