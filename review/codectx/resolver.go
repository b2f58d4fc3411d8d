package codectx

import (
	"context"

	"github.com/mergeguard/mergeguard/review/diff"
)

// resolver finds, for the changed files of one language family, the
// definitions their changed lines use and the call sites of the functions
// they change, and adds them as snippets through the collector (c.add).
// Collect asks the family's resolver (resolverFor); the name-based one
// (byName) is every family's fallback. A typed resolver that cannot
// handle a change (it does not load) calls byName itself.
type resolver interface {
	resolve(ctx context.Context, c *collector, targets []*target, in corpus) error
}

// corpus is what a resolver searches: the repository's files of the
// targets' family in search order (changed files first), their head
// contents as read within the limits, and the changed files' diffs.
type corpus struct {
	// order lists the files to search, changed files first; it is
	// already cut to the file limit.
	order []string
	// contents are the head contents of the files of order not parsed
	// yet (the changed files are: c.parsed); nil for a file that could
	// not be read.
	contents map[string][]byte
	// changed are the changed files by path.
	changed map[string]*diff.File
}

// resolverFor returns the resolver of a language family ("go", "python",
// "js", "java"): Go's types (typedGo) when the collection has the
// standard library's types (Options.Std), else the name-based one.
func (c *collector) resolverFor(fam string) resolver {
	if fam == "go" && c.opts.Std != nil {
		return typedGo{std: c.opts.Std, lim: c.opts.Go}
	}
	return byName{}
}

// byName resolves by name with tree-sitter: a file is parsed when its text
// holds a name the targets look for, then its definitions of those names
// and its calls of the changed functions are added.
type byName struct{}

func (byName) resolve(ctx context.Context, c *collector, targets []*target, in corpus) error {
	for _, f := range c.parseAll(ctx, in.order, in.contents, in.changed, targets) {
		if f != nil {
			c.scan(f, targets)
		}
	}
	return ctx.Err()
}
