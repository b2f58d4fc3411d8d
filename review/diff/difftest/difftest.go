// Package difftest generates large synthetic git diffs for the tests and
// benchmarks that bound the time and memory of a review: deterministic
// (the same size gives the same bytes), with many files of Go,
// JavaScript, Markdown and YAML, added, deleted, renamed and modified, in
// the proportions of a large merge range of a real repository (about 2.8
// added lines for each deleted one), and a few secrets-like strings.
package difftest

import (
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
)

// Stats describes a generated diff.
type Stats struct {
	Bytes     int
	Files     int
	Additions int
	Deletions int
	// Secrets counts the planted secrets-like strings (fake AWS key ids,
	// GitHub tokens and PEM private-key blocks).
	Secrets int
}

// Large returns a synthetic git diff of at least size bytes (it stops at
// the first file boundary past size) and what it holds.
func Large(size int) (string, Stats) {
	var b strings.Builder
	b.Grow(size + 64<<10)
	st := Write(&b, size)
	return b.String(), st
}

// Write writes the diff Large returns to w. A write error ends the diff
// early; strings.Builder and bufio.Writer report theirs on their own.
func Write(w io.Writer, size int) Stats {
	g := &gen{rnd: rand.New(rand.NewPCG(17, 1000)), w: &countingWriter{w: w}} //nolint:gosec // deterministic test data
	for g.w.n < size {
		g.file()
		if g.w.err != nil {
			break
		}
	}
	g.st.Bytes = g.w.n
	return g.st
}

type countingWriter struct {
	w   io.Writer
	n   int
	err error
}

func (c *countingWriter) printf(format string, args ...any) {
	if c.err != nil {
		return
	}
	n, err := fmt.Fprintf(c.w, format, args...)
	c.n += n
	c.err = err
}

type gen struct {
	rnd *rand.Rand
	w   *countingWriter
	st  Stats
}

// file writes one file's diff.
func (g *gen) file() {
	g.st.Files++
	kind := kinds[g.rnd.IntN(len(kinds))]
	path := fmt.Sprintf("%s/%s/%s%d.%s", dirs[g.rnd.IntN(len(dirs))], words[g.rnd.IntN(len(words))],
		words[g.rnd.IntN(len(words))], g.st.Files, kind)
	idx := fmt.Sprintf("index %07x..%07x", g.rnd.Uint32()>>4, g.rnd.Uint32()>>4)
	switch r := g.rnd.IntN(100); {
	case r < 10: // added
		body, n := g.lines('+', kind, 5+g.rnd.IntN(200))
		g.w.printf("diff --git a/%s b/%s\nnew file mode 100644\n%s\n--- /dev/null\n+++ b/%s\n@@ -0,0 +1,%d @@\n%s", path, path, idx, path, n, body)
		g.st.Additions += n
	case r < 14: // deleted
		body, n := g.lines('-', kind, 5+g.rnd.IntN(120))
		g.w.printf("diff --git a/%s b/%s\ndeleted file mode 100644\n%s\n--- a/%s\n+++ /dev/null\n@@ -1,%d +0,0 @@\n%s", path, path, idx, path, n, body)
		g.st.Deletions += n
	case r < 17: // renamed with changes
		old := "old/" + path
		g.w.printf("diff --git a/%s b/%s\nsimilarity index %d%%\nrename from %s\nrename to %s\n%s 100644\n--- a/%s\n+++ b/%s\n",
			old, path, 60+g.rnd.IntN(39), old, path, idx, old, path)
		g.hunks(kind, 1+g.rnd.IntN(3))
	default: // modified
		g.w.printf("diff --git a/%s b/%s\n%s 100644\n--- a/%s\n+++ b/%s\n", path, path, idx, path, path)
		g.hunks(kind, 1+g.rnd.IntN(8))
	}
}

// hunks writes n hunks: three context lines, some deleted, some added,
// three context lines.
func (g *gen) hunks(kind string, n int) {
	oldAt, newAt := 1+g.rnd.IntN(40), 0
	newAt = oldAt
	for range n {
		before, _ := g.lines(' ', kind, 3)
		dels, del := g.lines('-', kind, g.rnd.IntN(12))
		adds, add := g.lines('+', kind, 1+g.rnd.IntN(30))
		after, _ := g.lines(' ', kind, 3)
		g.w.printf("@@ -%d,%d +%d,%d @@ %s\n%s%s%s%s", oldAt, del+6, newAt, add+6, g.section(kind), before, dels, adds, after)
		g.st.Additions += add
		g.st.Deletions += del
		gap := 5 + g.rnd.IntN(80)
		oldAt += del + 6 + gap
		newAt += add + 6 + gap
	}
}

func (g *gen) section(kind string) string {
	if kind == "go" {
		return fmt.Sprintf("func (s *%s) %s(ctx context.Context) error {", title(g.word()), title(g.word()))
	}
	return ""
}

func (g *gen) word() string { return words[g.rnd.IntN(len(words))] }

// lines returns about n diff lines of a file of kind and their number:
// one added line in about 2,000 is a secret, and a PEM block takes eight.
func (g *gen) lines(op byte, kind string, n int) (string, int) {
	var b strings.Builder
	count := 0
	for range n {
		if op == '+' && g.rnd.IntN(2000) == 0 {
			count += g.secret(&b)
			continue
		}
		b.WriteByte(op)
		b.WriteString(g.line(kind))
		b.WriteByte('\n')
		count++
	}
	return b.String(), count
}

// line returns the text of one line of a file of kind.
func (g *gen) line(kind string) string {
	var text string
	switch kind {
	case "go":
		text = g.fill(goLines[g.rnd.IntN(len(goLines))])
	case "js", "ts":
		text = g.fill(jsLines[g.rnd.IntN(len(jsLines))])
	case "yaml":
		text = g.fill(yamlLines[g.rnd.IntN(len(yamlLines))])
	default:
		var b strings.Builder
		for i := range 4 + g.rnd.IntN(14) {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(g.word())
		}
		text = b.String()
	}
	return text
}

// fill replaces each "@" of a template with a word.
func (g *gen) fill(tmpl string) string {
	if !strings.Contains(tmpl, "@") {
		return tmpl
	}
	var b strings.Builder
	for i, part := range strings.Split(tmpl, "@") {
		if i > 0 {
			b.WriteString(g.word())
		}
		b.WriteString(part)
	}
	return b.String()
}

// secret writes added lines holding a fake credential and returns their
// number: one, or eight for a PEM block.
func (g *gen) secret(b *strings.Builder) int {
	g.st.Secrets++
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	rnd := func(n int, alphabet string) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[g.rnd.IntN(len(alphabet))]
		}
		return string(b)
	}
	switch g.rnd.IntN(3) {
	case 0:
		fmt.Fprintf(b, "+\tconst awsKeyID = \"AKIA%s\"\n", rnd(16, alnum))
		return 1
	case 1:
		fmt.Fprintf(b, "+\tgithubToken := \"ghp_%s\"\n", rnd(36, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"))
		return 1
	default:
		b.WriteString("+-----BEGIN RSA PRIVATE KEY-----\n")
		for range 6 {
			fmt.Fprintf(b, "+%s\n", rnd(64, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"))
		}
		b.WriteString("+-----END RSA PRIVATE KEY-----\n")
		return 8
	}
}

func title(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

var (
	kinds = []string{"go", "go", "go", "go", "go", "go", "js", "ts", "md", "yaml"}
	dirs  = []string{"daemon", "api/server", "client", "integration", "pkg/archive", "libnetwork", "vendor/github.com/x", "docs", "builder", "container"}
	words = []string{
		"container", "image", "network", "volume", "plugin", "service", "task", "node", "secret", "config",
		"daemon", "client", "server", "router", "handler", "request", "response", "context", "options", "state",
		"layer", "store", "driver", "mount", "label", "filter", "event", "health", "exec", "archive",
		"build", "cache", "token", "auth", "registry", "manifest", "digest", "platform", "runtime", "sandbox",
		"endpoint", "address", "port", "policy", "restart", "logger", "metrics", "trace", "span", "limit",
	}
	goLines = []string{
		"\tif err := s.@(ctx, @); err != nil {",
		"\t\treturn fmt.Errorf(\"@ @: %w\", err)",
		"\t}",
		"",
		"func (c *@) @(ctx context.Context, req *@Request) (*@Response, error) {",
		"\t@ := make(map[string]*@, len(@))",
		"\t// @ returns the @ of the @, or an error when the @ is gone.",
		"\ttoken, err := c.auth.Token(ctx, @)",
		"\tcfg.APIKey = os.Getenv(\"@_API_KEY\")",
		"\tfor _, @ := range @.@ {",
		"\t\t@ = append(@, @.@)",
		"\tlogrus.WithField(\"@\", @).Debug(\"@ @\")",
		"\treturn &@{@: @, @: @}, nil",
		"\tpassword := opts.@.Password",
		"\tdefer @.Close()",
		"\tcase @.@:",
	}
	jsLines = []string{
		"  const @ = await fetch(`${baseUrl}/api/@`, { headers: { Authorization: `Bearer ${token}` } });",
		"  if (!@) { throw new Error('@ @'); }",
		"export function @(@, @) {",
		"  return @.map((x) => x.@);",
		"}",
		"  // @ the @ before the @",
		"  const { @, @ } = props;",
		"import { @ } from './@';",
	}
	yamlLines = []string{
		"  @: @",
		"- name: @",
		"    image: @/@:latest",
		"  api_key: ${@_KEY}",
	}
)

// Hunks generates, deterministically, a git diff of files files with
// hunks hunks each; every hunk has 20 lines (8 context, 4 deleted, 8
// added), so 500 files × 5 hunks is 50,000 diff lines: the input of
// review/diff's BenchmarkParseIndex and of the side-by-side benchmark.
func Hunks(files, hunks int) string {
	var b strings.Builder
	for f := range files {
		path := fmt.Sprintf("pkg/mod%03d/file%03d.go", f%37, f)
		fmt.Fprintf(&b, "diff --git a/%s b/%s\nindex 0123456..89abcde 100644\n--- a/%s\n+++ b/%s\n", path, path, path, path)
		oldStart, newStart := 10, 10
		for h := range hunks {
			fmt.Fprintf(&b, "@@ -%d,12 +%d,16 @@ func handler%d(w http.ResponseWriter, r *http.Request) {\n", oldStart, newStart, h)
			n := 0
			line := func(op byte) {
				fmt.Fprintf(&b, "%c\tvalue%d := compute(ctx, request.Field%d, %q)\n", op, n, f+h, "some text")
				n++
			}
			for _, op := range []byte("   ---+++++  -+++   ") {
				line(op)
			}
			oldStart += 12 + 30
			newStart += 16 + 30
		}
	}
	return b.String()
}
