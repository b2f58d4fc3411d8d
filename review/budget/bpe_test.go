package budget

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dlclark/regexp2"
	"github.com/google/go-cmp/cmp"
	tiktoken "github.com/pkoukk/tiktoken-go"
	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"
)

// reference is tiktoken-go's encoder of an encoding, built as this package
// built it before it did the splitting and merging itself; built once per
// encoding and shared by the tests (building one takes a second).
func reference(t testing.TB, name string) *tiktoken.Tiktoken {
	t.Helper()
	ref, err := references[name]()
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

// references builds each encoding's reference once.
var references = map[string]func() (*tiktoken.Tiktoken, error){
	O200kBase:  sync.OnceValues(func() (*tiktoken.Tiktoken, error) { return buildReference(O200kBase, o200kPattern) }),
	CL100kBase: sync.OnceValues(func() (*tiktoken.Tiktoken, error) { return buildReference(CL100kBase, cl100kPattern) }),
}

func buildReference(name, pattern string) (*tiktoken.Tiktoken, error) {
	ranks, err := tiktokenloader.NewOfflineLoader().LoadTiktokenBpe(name + ".tiktoken")
	if err != nil {
		return nil, err
	}
	bpe, err := tiktoken.NewCoreBPE(ranks, map[string]int{}, pattern)
	if err != nil {
		return nil, err
	}
	return tiktoken.NewTiktoken(bpe, &tiktoken.Encoding{Name: name, PatStr: pattern, MergeableRanks: ranks}, map[string]any{}), nil
}

// shared is the encodings the tests share: each loads its vocabulary on
// first use (a quarter of a second) and is safe for concurrent use.
var shared = sync.OnceValue(NewTokenizers)

// sharedEncoding is the shared encoding of name.
func sharedEncoding(name string) *encoding {
	if name == CL100kBase {
		return shared().cl100k
	}
	return shared().o200k
}

// longestPiece returns the byte length of the longest piece of text.
func (e *encoding) longestPiece(text string) int {
	e.once.Do(e.load)
	runes := []rune(text)
	longest := 0
	for i := 0; i < len(runes); {
		end := e.next(runes, i)
		longest = max(longest, len(string(runes[i:end])))
		i = end
	}
	return longest
}

// The split patterns of the encodings in tiktoken-go v0.1.8 (which does not
// export them) and OpenAI's tiktoken.
const (
	o200kPattern = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
		`|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
		`|\p{N}{1,3}` +
		`| ?[^\s\p{L}\p{N}]+[\r\n/]*` +
		`|\s*[\r\n]+` +
		`|\s+(?!\S)` +
		`|\s+`
	cl100kPattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

// patternPieces cuts text with the compiled split pattern re and regexp2, as
// tiktoken-go does, and returns the pieces.
func patternPieces(t testing.TB, re *regexp2.Regexp, text string) []string {
	t.Helper()
	runes := []rune(text)
	var pieces []string
	m, err := re.FindRunesMatch(runes)
	for m != nil && err == nil {
		pieces = append(pieces, string(runes[m.Index:m.Index+m.Length]))
		m, err = re.FindNextMatch(m)
	}
	if err != nil {
		t.Fatal(err)
	}
	return pieces
}

// splitPieces cuts text into the pieces of e.
func splitPieces(e *encoding, text string) []string {
	e.once.Do(e.load)
	runes := []rune(text)
	var pieces []string
	for i := 0; i < len(runes); {
		end := e.next(runes, i)
		pieces = append(pieces, string(runes[i:end]))
		i = end
	}
	return pieces
}

// splitAlphabet has runes of every class the patterns tell apart.
const splitAlphabet = " \t\n\r\v\f\u0085\u00a0\u2028\u3000\u200b" + // white space, and a zero-width space
	"aAzZsStTrRvVmMlLdDeEſKİǅʰ中あ" + // cases, contraction letters and their look-alikes, Lt, Lm, Lo
	"\u0301\u0903\u20dd" + // combining marks: Mn, Mc, Me
	"09٣Ⅻ½" + // numbers: Nd, Nl, No
	"'’/.-_!\"{}😀\ufffd\x00" // punctuation and symbols

// TestSplitMatchesPattern compares the pieces cut by hand with regexp2's
// matches of the split patterns on random texts of every class of rune.
func TestSplitMatchesPattern(t *testing.T) {
	alphabet := []rune(splitAlphabet)
	rng := rand.New(rand.NewPCG(11, 12))
	for _, name := range []string{O200kBase, CL100kBase} {
		pattern := o200kPattern
		if name == CL100kBase {
			pattern = cl100kPattern
		}
		e, re := sharedEncoding(name), regexp2.MustCompile(pattern, regexp2.None)
		for range 3000 {
			rs := make([]rune, rng.IntN(24))
			for i := range rs {
				rs[i] = alphabet[rng.IntN(len(alphabet))]
			}
			text := string(rs)
			if d := cmp.Diff(patternPieces(t, re, text), splitPieces(e, text)); d != "" {
				t.Fatalf("%s: pieces of %q (-pattern +split):\n%s", name, text, d)
			}
		}
	}
}

// FuzzSplit compares the pieces cut by hand with regexp2's matches.
func FuzzSplit(f *testing.F) {
	for _, s := range []string{"I'll say it's", "  \n\n  x", "AAb Ccc dDD", "e\u0301\u0301x", "日本語 ünï", "}\n//x", "\xff\xfe", "1234 5"} {
		f.Add(s)
	}
	encodings := map[string]*encoding{o200kPattern: {name: O200kBase}, cl100kPattern: {name: CL100kBase}}
	compiled := map[string]*regexp2.Regexp{}
	for pattern := range encodings {
		compiled[pattern] = regexp2.MustCompile(pattern, regexp2.None)
	}
	f.Fuzz(func(t *testing.T, text string) {
		text = string([]rune(text)) // as counted: invalid bytes become U+FFFD
		for pattern, e := range encodings {
			if d := cmp.Diff(patternPieces(t, compiled[pattern], text), splitPieces(e, text)); d != "" {
				t.Fatalf("%s: pieces of %q (-pattern +split):\n%s", e.name, text, d)
			}
		}
	})
}

// corpus returns the repository's text files (sources, documentation and
// the diffs of the fixtures in testdata), by path.
func corpus(t *testing.T) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != "../.." || d.Name() == "bin" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		switch filepath.Ext(path) {
		case ".go", ".md", ".diff", ".json", ".yml", ".yaml", ".sql", ".sh":
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			files[path] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestCountMatchesTiktoken checks that the counts are tiktoken-go's on
// tricky strings and on every text file of the repository, whose pieces
// are all shorter than maxMergeBytes.
func TestCountMatchesTiktoken(t *testing.T) {
	texts := map[string]string{
		"empty":          "",
		"special tokens": "<|endoftext|> and <|fim_prefix|><|endofprompt|>",
		"contractions":   "I'll say it's DON'T we've THEY'RE o'clock",
		"unicode":        "日本語のコメント — ünïcödé ✓ 🚀🚀🚀 e\u0301\u0301 Ωμέγα",
		"invalid UTF-8":  "ok \xff\xfe bad \xc3 half \xe2\x82 end",
		"whitespace":     "a  \t\n\n   \r\n\r\n\t\t  b   \n   ",
		"numbers":        "1234567 3.14159 0x7fffffff 1e-9",
		"code":           "func main() {\n\tfmt.Println(\"héllo\")\n}\n// comment ///\n",
		"long piece":     strings.Repeat("=", maxMergeBytes),
	}
	files := corpus(t)
	paths := slices.Sorted(maps.Keys(files))
	// The race detector makes tiktoken-go slow: compare one file in 8.
	// Slow: -short (make test-short) compares one file in 32 (1.4 of the
	// test's 2.6 CPU-seconds were tiktoken-go's at one in 8); make test
	// compares them all.
	every := 1
	switch {
	case testing.Short():
		every = 32
	case raceEnabled:
		every = 8
	}
	for i, path := range paths {
		if i%every == 0 {
			texts[path] = files[path]
		}
	}
	if len(files) < 100 {
		t.Fatalf("only %d files: is the repository there?", len(files))
	}
	for _, name := range []string{O200kBase, CL100kBase} {
		ref, e := reference(t, name), sharedEncoding(name)
		for label, text := range texts {
			got, want := e.Count(text), len(ref.EncodeOrdinary(text))
			if got == want {
				continue
			}
			if l := e.longestPiece(text); l > maxMergeBytes {
				t.Errorf("%s: %s has a piece of %d bytes; raise maxMergeBytes or leave the file out", name, label, l)
				continue
			}
			t.Errorf("%s: %s counted %d tokens, tiktoken-go %d", name, label, got, want)
		}
	}
}

// randomText is n bytes or a little more of runes drawn from alphabet.
func randomText(n int, alphabet string, seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, 1))
	runes := []rune(alphabet)
	var b strings.Builder
	for b.Len() < n {
		b.WriteRune(runes[rng.IntN(len(runes))])
	}
	return b.String()
}

// TestCountLongPieces checks that pieces longer than maxMergeBytes are
// counted high, by at most a token per part, on pieces whose exact count
// tiktoken-go still computes in a reasonable time.
func TestCountLongPieces(t *testing.T) {
	const lower, upper = "abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	kinds := map[string]func(n int) string{
		"random lowercase": func(n int) string { return randomText(n, lower, 1) },
		"capitals then lowercase": func(n int) string {
			return randomText(n/2, upper, 2) + randomText(n/2, lower, 3)
		},
		"one letter":  func(n int) string { return strings.Repeat("a", n) },
		"spaces":      func(n int) string { return strings.Repeat(" ", n) },
		"blank lines": func(n int) string { return strings.Repeat("\n", n) },
		"punctuation": func(n int) string { return strings.Repeat("=-", n/2) },
		"CJK": func(n int) string {
			return randomText(n, "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可她里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三已老", 4)
		},
	}
	sizes := map[string][]int{O200kBase: {4 << 10, 12 << 10}, CL100kBase: {4 << 10}}
	if raceEnabled || testing.Short() { // slow: -short (make test-short) counts the smaller texts too
		sizes = map[string][]int{O200kBase: {4 << 10}, CL100kBase: {2 << 10}}
	}
	for name, ns := range sizes {
		ref, e := reference(t, name), sharedEncoding(name)
		for kind, gen := range kinds {
			for _, n := range ns {
				text := gen(n)
				if l := e.longestPiece(text); l <= maxMergeBytes {
					t.Fatalf("%s %s: longest piece %d bytes, want a long one", name, kind, l)
				}
				exact := len(ref.EncodeOrdinary(text))
				parts := len(text)/(partBytes-3) + 2 // parts are cut between runes
				if got := e.Count(text); got < exact || got > exact+parts {
					t.Errorf("%s %s of %d bytes: counted %d tokens, want %d to %d", name, kind, len(text), got, exact, exact+parts)
				}
			}
		}
	}
}

// cancelAt is a context that is cancelled from the at-th call of Err
// on, counting the calls in looks.
type cancelAt struct {
	context.Context
	at, looks int
}

func (c *cancelAt) Err() error {
	if c.looks++; c.looks >= c.at {
		return context.Canceled
	}
	return nil
}

// TestCountContextStops cancels the count of a long text midway.
func TestCountContextStops(t *testing.T) {
	e := sharedEncoding(O200kBase)
	e.Count("load the vocabulary")
	text := strings.Repeat("func f(ctx context.Context) error { return nil } // x\n", 20_000) // 300,000 pieces
	// Cancelled at the third look: the count must look while it counts,
	// and return at the first look that finds it cancelled.
	ctx := &cancelAt{Context: t.Context(), at: 3}
	if _, err := e.CountContext(ctx, text); !errors.Is(err, context.Canceled) {
		t.Fatalf("CountContext = %v, want context.Canceled", err)
	}
	if ctx.looks != ctx.at {
		t.Errorf("CountContext looked at the context %d times, want %d: it must stop at the first look after the cancellation", ctx.looks, ctx.at)
	}
	done, stop := context.WithCancel(t.Context())
	stop()
	for _, c := range []Counter{e, scaled{e}, Estimate{}} {
		if _, err := CountContext(done, c, "text"); !errors.Is(err, context.Canceled) {
			t.Errorf("CountContext(%T) on a done context = %v, want context.Canceled", c, err)
		}
	}
}
