package codectx

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/review/gomod"
	"github.com/mergeguard/mergeguard/review/lang"
)

// Reader is what the context is read from; every review.Source is one.
type Reader interface {
	ReadFile(ctx context.Context, path string, rev review.Revision) ([]byte, error)
	ListFiles(ctx context.Context) ([]string, error)
}

// preloadFrom is the number of files to read from which the whole head is
// fetched at once (on GitHub one archive call) rather than file by file (a
// call each).
const preloadFrom = 5

// preloader is a Reader that can fetch every head file at once (the GitHub
// source, from the repository archive).
type preloader interface {
	Preload(ctx context.Context) error
}

// Limits bound the work of Collect. Zero fields take the defaults.
type Limits struct {
	// MaxFiles is the most files read, the changed ones included (200).
	MaxFiles int
	// MaxFileBytes skips larger files (1 MiB).
	MaxFileBytes int
	// MaxSnippetLines is the longest snippet; a longer enclosing
	// definition is shown by its signature, a longer caller around the
	// call (60).
	MaxSnippetLines int
	// MaxReadBytes bounds the bytes read in all (32 MiB); the files past
	// it in the search order are left out, with a note.
	MaxReadBytes int
	// MaxParseBytes bounds the bytes parsed in all (8 MiB), the parse
	// work; the files past it in the search order are left out, with a
	// note.
	MaxParseBytes int
	// Deadline is a safety bound on the whole collection (2 min), far
	// above what the other limits allow: a collection that hits it fails
	// with errDeadline rather than returning a part of the context, so
	// that what the limits above let in never depends on the machine's
	// speed.
	Deadline time.Duration
}

// Options are what Collect works with: its limits and, for Go, the
// standard library's types.
type Options struct {
	Limits
	// Std, when set, has Go resolved with go/types over the module
	// (review/gomod): the module's packages are type-checked from the head
	// tree and the standard library comes from Std. Without it Go is
	// resolved by name like the other languages.
	Std *gomod.Std
	// Go bounds the type-checking (zero fields: gomod's defaults).
	Go gomod.Limits
}

// errDeadline is the cause of a collection stopped by Limits.Deadline.
var errDeadline = errors.New("code context: the collection hit its safety deadline")

func (l Limits) withDefaults() Limits {
	l.MaxFiles = cmp.Or(l.MaxFiles, 200)
	l.MaxFileBytes = cmp.Or(l.MaxFileBytes, 1<<20)
	l.MaxSnippetLines = cmp.Or(l.MaxSnippetLines, 60)
	l.MaxReadBytes = cmp.Or(l.MaxReadBytes, 32<<20)
	l.MaxParseBytes = cmp.Or(l.MaxParseBytes, 8<<20)
	l.Deadline = cmp.Or(l.Deadline, 2*time.Minute)
	return l
}

// Kind says why a snippet is shown.
type Kind string

// Snippet kinds, by relevance.
const (
	Enclosing   Kind = "enclosing"
	Definition  Kind = "definition"
	Caller      Kind = "call site"
	Declaration Kind = "declaration"
)

// Snippet is a range of a head file shown as read-only context for one
// changed file.
type Snippet struct {
	Kind Kind
	// For is the changed file the snippet is context for.
	For  string
	Path string
	// Name is the function or type the snippet is about.
	Name       string
	Start, End int
	// Lines are the file's lines Start..End.
	Lines []string
	// Score orders snippets: higher first.
	Score int
}

// Result is what Collect found.
type Result struct {
	// ByFile are the snippets for each changed file, best first.
	ByFile map[string][]Snippet
	// FilesRead and FilesParsed count the files read and parsed.
	FilesRead, FilesParsed int
	// ParseTime is the time spent parsing.
	ParseTime time.Duration
	// Notes say what could not be done (a time limit, a file limit).
	Notes []string
}

// target is a changed file being given context.
type target struct {
	f       *file
	changed map[int]bool   // head lines added, or next to removed lines
	shown   map[int]bool   // head lines the diff's hunks show
	uses    []string       // names its changed lines call or use as types
	refs    map[string]ref // how each of uses is used
	funcs   map[string]bool
	fam     string
}

// Collect finds the context of the changed files: files are the changed
// files to give context to (the reviewed ones). Files are read from r at
// the head revision; a changed file r cannot read (a bare diff) is pieced
// together from its hunks. It stops at the limits and returns what it
// found so far, with a note. The limits count files and bytes, never
// time, so that the same change gives the same context on any machine;
// the safety deadline (Limits.Deadline) is an error, never a silent cut.
func Collect(ctx context.Context, r Reader, files []*diff.File, opts Options) (Result, error) {
	opts.Limits = opts.withDefaults()
	ctx, cancel := context.WithTimeoutCause(ctx, opts.Deadline, errDeadline)
	defer cancel()
	res, err := collect(ctx, r, files, opts)
	if err != nil && errors.Is(context.Cause(ctx), errDeadline) {
		return Result{ByFile: map[string][]Snippet{}}, fmt.Errorf("%w (%s)", errDeadline, opts.Deadline)
	}
	return res, err
}

// collect is Collect under the safety deadline.
func collect(ctx context.Context, r Reader, files []*diff.File, opts Options) (Result, error) {
	c := &collector{r: r, lim: opts.Limits, opts: opts, res: Result{ByFile: map[string][]Snippet{}},
		parsed: map[string]*file{}, goFiles: map[string]*file{}}
	if p, ok := r.(preloader); ok && supported(files) >= preloadFrom {
		_ = p.Preload(ctx) // best effort: otherwise files are read one by one
	}
	var targets []*target
	for _, df := range files {
		t, err := c.target(ctx, df)
		if err != nil {
			return c.res, err
		}
		if t != nil {
			targets = append(targets, t)
			c.enclosing(t)
		}
	}
	if len(targets) == 0 {
		return c.res, nil
	}
	if err := c.search(ctx, targets, files); err != nil {
		return c.res, err
	}
	for p, ss := range c.res.ByFile {
		c.res.ByFile[p] = rank(ss)
	}
	return c.res, nil
}

// collector holds the state of one Collect.
type collector struct {
	r      Reader
	lim    Limits
	opts   Options
	res    Result
	parsed map[string]*file
	// goFiles are the Go files the typed resolver read, by path: their
	// lines, for snippets.
	goFiles map[string]*file
	// listing is the reader's listing of the head (listErr when it
	// failed), made once by search.
	listing []string
	listErr error
	// parseBytes are the bytes parsed so far, against MaxParseBytes.
	parseBytes int
}

// target reads and parses a changed file; nil when it has no grammar or
// no content.
func (c *collector) target(ctx context.Context, df *diff.File) (*target, error) {
	if df.Status == diff.Deleted || df.Binary || !Supported(df.Path()) {
		return nil, nil
	}
	l := lang.Detect(df.Path())
	src, err := c.r.ReadFile(ctx, df.Path(), review.Head)
	c.res.FilesRead++
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		src = fromHunks(df) // a bare diff: what its hunks show
	}
	if len(src) > c.lim.MaxFileBytes {
		return nil, nil
	}
	f, err := c.parse(ctx, df.Path(), l, src)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, nil //nolint:nilerr // a file that does not parse gets no context
	}
	t := &target{f: f, changed: map[int]bool{}, shown: map[int]bool{}, fam: family(l)}
	for _, h := range df.Hunks {
		for i, ln := range h.Lines {
			switch ln.Kind {
			case diff.Add:
				t.changed[int(ln.NewLine)] = true
			case diff.Delete:
				t.changed[nextNew(h.Lines[i:], h.NewStart+h.NewLines)] = true
			}
			if ln.NewLine > 0 {
				t.shown[int(ln.NewLine)] = true
			}
		}
	}
	t.uses, t.refs = f.uses(t.changed)
	t.funcs = f.changedFuncs(t.changed)
	return t, nil
}

// nextNew is the head line after a removed line: the next line of the
// hunk with a new-file number, or end.
func nextNew(lines []diff.Line, end int) int {
	for _, l := range lines {
		if l.NewLine > 0 {
			return int(l.NewLine)
		}
	}
	return max(end-1, 1)
}

// fromHunks pieces a head file together from a diff's hunks: the lines
// they show at their numbers, blank lines elsewhere.
func fromHunks(df *diff.File) []byte {
	var lines []string
	for _, h := range df.Hunks {
		for _, l := range h.Lines {
			if l.NewLine == 0 {
				continue
			}
			for len(lines) < int(l.NewLine) {
				lines = append(lines, "")
			}
			lines[l.NewLine-1] = l.Text
		}
	}
	return []byte(strings.Join(lines, "\n"))
}

// parse parses a file, timing it, and keeps it for reuse.
func (c *collector) parse(ctx context.Context, p, l string, src []byte) (*file, error) {
	if f, ok := c.parsed[p]; ok {
		return f, nil
	}
	start := time.Now()
	c.parseBytes += len(src)
	f, err := parseFile(ctx, p, l, src)
	c.res.ParseTime += time.Since(start)
	if err != nil {
		return nil, err
	}
	c.res.FilesParsed++
	c.parsed[p] = f
	return f, nil
}

// enclosing adds the enclosing definitions of t's changed lines that the
// hunks do not already show whole.
func (c *collector) enclosing(t *target) {
	seen := map[*def]bool{}
	for _, line := range sortedKeys(t.changed) {
		d := t.f.enclosing(line)
		if d == nil || seen[d] {
			continue
		}
		seen[d] = true
		start, end := d.start, d.end
		if end-start+1 > c.lim.MaxSnippetLines {
			end = start + (d.node.Start - start) // the doc comment...
			if b := d.node.Child("body"); b != nil {
				end = b.Start // ...and the signature
			}
			end = min(end, start+c.lim.MaxSnippetLines-1)
		}
		c.add(t, Enclosing, t.f, d.name, start, end, 40)
	}
}

// add records a snippet of f for t unless the hunks already show it.
func (c *collector) add(t *target, k Kind, f *file, name string, start, end, score int) {
	if f == t.f && allShown(start, end, t.shown) {
		return
	}
	if start < 1 || end > len(f.lines) || start > end {
		return
	}
	c.res.ByFile[t.f.path] = append(c.res.ByFile[t.f.path], Snippet{Kind: k, For: t.f.path, Path: f.path, Name: name,
		Start: start, End: end, Lines: f.lines[start-1 : end], Score: score})
}

// allShown reports whether every line of start..end is shown.
func allShown(start, end int, shown map[int]bool) bool {
	for l := start; l <= end; l++ {
		if !shown[l] {
			return false
		}
	}
	return true
}

// sortedKeys returns the keys of m in order.
func sortedKeys(m map[int]bool) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// search reads the repository's files of the targets' languages, changed
// files first, then those in the changed files' directories, then the
// rest, up to the file limit, and adds the definitions the targets use and
// the call sites of the functions they change.
func (c *collector) search(ctx context.Context, targets []*target, changed []*diff.File) error {
	all, err := c.r.ListFiles(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		all = nil // only the changed files are known
	}
	c.listing, c.listErr = all, err // for the typed resolver's loader
	order := searchOrder(all, targets)
	// The changed files, first in the order, are read already.
	if budget := c.lim.MaxFiles - c.res.FilesRead + len(targets); len(order) > budget {
		c.res.Notes = append(c.res.Notes, fmt.Sprintf("Code context: %d of %d files of the change's languages were searched for definitions and callers.",
			max(budget, len(targets)), len(order)))
		order = order[:max(budget, len(targets))]
	}
	if p, ok := c.r.(preloader); ok && len(order)-len(targets) >= preloadFrom {
		_ = p.Preload(ctx) // best effort: otherwise files are read one by one
	}
	byPath := map[string]*diff.File{}
	for _, df := range changed {
		byPath[df.Path()] = df
	}
	contents := c.contents(ctx, order)
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, fam := range families(targets) {
		var ts []*target
		for _, t := range targets {
			if t.fam == fam {
				ts = append(ts, t)
			}
		}
		var famOrder []string
		for _, p := range order {
			if family(lang.Detect(p)) == fam {
				famOrder = append(famOrder, p)
			}
		}
		in := corpus{order: famOrder, contents: contents, changed: byPath}
		if err := c.resolverFor(fam).resolve(ctx, c, ts, in); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// families lists the language families of the targets, in their order.
func families(targets []*target) []string {
	var out []string
	for _, t := range targets {
		if !slices.Contains(out, t.fam) {
			out = append(out, t.fam)
		}
	}
	return out
}

// parseAll parses the files of order that mention a name the targets look
// for, on every core, and returns them in order (nil for those left out).
func (c *collector) parseAll(ctx context.Context, order []string, contents map[string][]byte, byPath map[string]*diff.File, targets []*target) []*file {
	out := make([]*file, len(order))
	var mu sync.Mutex
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, p := range order {
		if f, ok := c.parsed[p]; ok {
			out[i] = f
			continue
		}
		src := contents[p]
		if df, ok := byPath[p]; ok && src == nil {
			src = fromHunks(df)
		}
		if src == nil || len(src) > c.lim.MaxFileBytes || !mentions(src, targets, family(lang.Detect(p))) {
			continue
		}
		// The parse budget is spent in the search order, before any
		// parsing: what is parsed never depends on how fast it goes.
		if c.parseBytes+len(src) > c.lim.MaxParseBytes {
			c.res.Notes = append(c.res.Notes, fmt.Sprintf("Code context: files past %s in the search order were not parsed (limit of %d bytes parsed).", p, c.lim.MaxParseBytes))
			break
		}
		c.parseBytes += len(src)
		g.Go(func() error {
			start := time.Now()
			f, err := parseFile(ctx, p, lang.Detect(p), src)
			mu.Lock()
			defer mu.Unlock()
			c.res.ParseTime += time.Since(start)
			if err == nil {
				c.res.FilesParsed++
				out[i] = f
			}
			return nil // a file that does not parse is left out
		})
	}
	_ = g.Wait()
	return out
}

// contents reads the files of order not parsed yet (the changed files
// are), by path.
func (c *collector) contents(ctx context.Context, order []string) map[string][]byte {
	var toRead []string
	for _, p := range order {
		if _, ok := c.parsed[p]; !ok {
			toRead = append(toRead, p)
		}
	}
	read := c.readAll(ctx, toRead)
	out := make(map[string][]byte, len(toRead))
	total := 0
	for i, p := range toRead {
		total += len(read[i])
		if total > c.lim.MaxReadBytes {
			c.res.Notes = append(c.res.Notes, fmt.Sprintf("Code context: %d of %d files were searched: the rest is past the limit of %d bytes read.",
				i, len(toRead), c.lim.MaxReadBytes))
			break
		}
		out[p] = read[i]
	}
	return out
}

// readAll reads the head contents of paths, a few at a time; a file that
// cannot be read is nil.
func (c *collector) readAll(ctx context.Context, paths []string) [][]byte {
	out := make([][]byte, len(paths))
	const group = 8
	for start := 0; start < len(paths) && ctx.Err() == nil; start += group {
		var wg sync.WaitGroup
		for i := start; i < min(start+group, len(paths)); i++ {
			wg.Go(func() {
				if b, err := c.r.ReadFile(ctx, paths[i], review.Head); err == nil {
					out[i] = b
				}
			})
		}
		wg.Wait()
		c.res.FilesRead += min(start+group, len(paths)) - start
	}
	return out
}

// searchOrder lists the files to search: those of the targets' language
// families, changed files first, then the changed files' directories, then
// the rest; vendored code is left out.
func searchOrder(all []string, targets []*target) []string {
	fams := map[string]bool{}
	dirs := map[string]bool{}
	rank := map[string]int{}
	for _, t := range targets {
		fams[t.fam] = true
		dirs[path.Dir(t.f.path)] = true
		rank[t.f.path] = 0
	}
	var out []string
	for _, t := range targets {
		out = append(out, t.f.path)
	}
	var near, far []string
	for _, p := range all {
		if _, ok := rank[p]; ok || !fams[family(lang.Detect(p))] || vendored(p) {
			continue
		}
		if dirs[path.Dir(p)] {
			near = append(near, p)
		} else {
			far = append(far, p)
		}
	}
	return append(append(out, near...), far...)
}

// vendored reports whether p lies in third-party code.
func vendored(p string) bool {
	for _, dir := range []string{"vendor/", "node_modules/", "third_party/", "third-party/"} {
		if strings.HasPrefix(p, dir) || strings.Contains(p, "/"+dir) {
			return true
		}
	}
	return false
}

// mentions reports whether src holds a name a target of its family looks
// for: a cheap test before parsing.
func mentions(src []byte, targets []*target, fam string) bool {
	for _, t := range targets {
		if t.fam != fam {
			continue
		}
		for _, n := range t.uses {
			if bytes.Contains(src, []byte(n)) {
				return true
			}
		}
		for n := range t.funcs {
			if bytes.Contains(src, []byte(n)) {
				return true
			}
		}
	}
	return false
}

// supported counts the files Collect parses: those with a grammar that the
// change did not delete.
func supported(files []*diff.File) int {
	n := 0
	for _, df := range files {
		if df.Status != diff.Deleted && !df.Binary && Supported(df.Path()) {
			n++
		}
	}
	return n
}
