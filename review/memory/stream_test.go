package memory_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/memory"
)

// This file measures the memory on a synthetic stream of pull requests
// (docs/quality.md, The memory of dismissals): one nit pattern, worded
// each time in other words with other identifiers and line numbers, that
// writers dismiss every time it is posted; real findings of many kinds,
// each dismissed now and then but never as often as N; and committed
// secrets, dismissed every time, which are never suppressed.

// nitTitles, nitBodies and nitCode are the ways the nit is worded.
var (
	nitTitles = []string{
		"Error string should not be capitalized",
		"Error message starts with a capital letter",
		"Capitalized error string in %s",
		"Error strings must not be capitalized",
		"Do not capitalize error messages",
	}
	nitBodies = []string{
		"Go error strings should not be capitalized or end with punctuation, since they are usually printed following other context. Use a lowercase first letter in the message returned by %s.",
		"By Go convention, error messages start with a lowercase letter because they are often wrapped by callers. The error created on line %d of %s is capitalized.",
		"The error message in %s begins with an upper-case letter. Go style (Effective Go, go vet's ST1005) says error strings should not be capitalized.",
		"Error strings are composed into larger messages, so a capital first letter reads oddly; lowercase the error string returned from %s.",
		"Capitalized error strings violate the Go convention (staticcheck ST1005): the message from %s should start with a lowercase letter.",
	}
	nitCode = []string{
		`return fmt.Errorf("Failed to %s %s: %%w", err)`,
		`return errors.New("Invalid %s for %s")`,
		`return nil, fmt.Errorf("Could not %s the %s")`,
	}
)

// realKinds are distinct problems a review reports, each a title, a
// description and cited code; %s is an identifier, %d a number.
var realKinds = [][3]string{
	{"Possible nil pointer dereference of %s", "%s may be nil when the lookup fails, and it is dereferenced without a check on line %d, which panics.", "v := %s.Field"},
	{"Error returned by %s is ignored", "The error from %s is discarded; a failure leaves the state half-written and nobody learns of it.", "_ = %s(ctx)"},
	{"SQL query built by string concatenation", "The query concatenates %s into the SQL text, which allows SQL injection. Use a parameterized query.", `db.Query("SELECT * FROM t WHERE id = " + %s)`},
	{"Loop variable captured by goroutine", "The goroutine started in the loop captures %s by reference; with Go before 1.22 every goroutine sees the last value.", "go func() { use(%s) }()"},
	{"Missing context cancellation in %s", "The context created with WithTimeout is never cancelled, leaking its timer until it fires after %d seconds.", "ctx, _ := context.WithTimeout(ctx, %s)"},
	{"Unbounded allocation from request size", "The handler allocates a buffer of the size the client sends in %s without a limit, so one request can exhaust memory.", "buf := make([]byte, %s)"},
	{"Race on map %s", "The map is written from several goroutines without a lock; concurrent map writes crash the process.", "%s[key] = value"},
	{"Off-by-one in slice bound", "The loop runs to len(%s) inclusive and indexes past the end on the last iteration, line %d.", "for i := 0; i <= len(%s); i++"},
	{"HTTP response body not closed", "The body of the response from %s is never closed, which leaks the connection and its file descriptor.", "resp, err := http.Get(%s)"},
	{"Quadratic string building in %s", "Strings are concatenated with += inside a loop over %d items; use strings.Builder to avoid copying on every iteration.", "s += %s"},
	{"Integer overflow converting length to int32", "The length of %s is converted to int32 without a range check and wraps for inputs over 2 GiB.", "n := int32(len(%s))"},
	{"Deadlock: mutex locked twice", "%s locks mu and then calls a helper that locks it again; sync.Mutex is not reentrant, so the call blocks forever.", "s.mu.Lock(); s.%s()"},
	{"Path traversal through user-supplied file name", "The file name from the request is joined to the upload directory without cleaning, so ../ escapes it; validate %s.", "filepath.Join(dir, %s)"},
	{"Timing attack on token comparison", "Comparing the secret token with == leaks its prefix through timing; use subtle.ConstantTimeCompare for %s.", "if %s == token {"},
	{"Database rows not closed", "rows from %s are never closed on the early return, holding the connection until the pool runs dry.", "rows, err := db.Query(%s)"},
	{"Retry loop without backoff", "%s retries immediately in a tight loop, hammering the server when it is down; add exponential backoff with jitter.", "for { if err := %s(); err == nil { break } }"},
	{"Regexp compiled on every call", "regexp.MustCompile runs inside %s, which is called per request; compile the pattern once.", "re := regexp.MustCompile(%s)"},
	{"Division by zero when the list is empty", "The average divides by len(%s), which is zero for an empty input, and panics.", "avg := sum / len(%s)"},
	{"Sensitive value written to the log", "The password field of %s is logged at info level and ends up in the log aggregator.", "log.Info().Str(\"password\", %s)"},
	{"Goroutine leak on early return", "The goroutine sending on %s blocks forever when the caller returns early, because the channel is unbuffered.", "ch <- %s"},
	{"Time compared with == instead of Equal", "time.Time values with different locations or monotonic readings compare unequal with ==; use %s.Equal.", "if t == %s {"},
	{"Defer inside loop holds files open", "defer f.Close() inside the loop over %d files keeps every file open until %s returns.", "defer %s.Close()"},
	{"Shadowed err hides a failure", "err is redeclared with := in the inner block, so the failure of %s is never returned by the outer function.", "v, err := %s()"},
	{"Insecure TLS configuration", "InsecureSkipVerify is set to true for %s, which disables certificate checks and allows interception.", "InsecureSkipVerify: true, // %s"},
	{"N+1 queries when loading %s", "Each item triggers its own query inside the loop; load them with one query using IN for %d ids.", "for _, id := range ids { db.Get(%s, id) }"},
	{"Wrong HTTP status on validation failure", "Invalid input in %s is answered with 500 instead of 400, so clients retry a request that can never succeed.", "w.WriteHeader(500) // %s"},
	{"Cache never evicts entries", "The cache in %s grows with every distinct key and has no size bound or TTL, so memory grows without limit.", "cache[%s] = v"},
	{"Function %s is too long", "This function spans %d lines and mixes parsing, validation and storage; split it into smaller functions.", "func %s() {"},
	{"Magic number should be a named constant", "The literal %d in %s has no name explaining what it means; introduce a named constant.", "if n > %s {"},
	{"Exported function lacks a doc comment", "%s is exported but has no doc comment, so go doc shows nothing for it.", "func %s(x int) error {"},
	{"Duplicate code in two handlers", "The validation in %s repeats the one in the create handler line for line; extract a shared helper.", "if err := validate(%s); err != nil {"},
	{"Misleading variable name %s", "The name suggests a count but the variable holds a byte size; rename it so readers are not misled.", "%s := len(data)"},
	{"Redundant nil check before len", "len of a nil slice is zero, so the nil check before len(%s) is unnecessary.", "if %s != nil && len(%s) > 0 {"},
	{"Boolean parameter obscures call sites", "Calls like %s(x, true) do not say what true means; use an options struct or two functions.", "func %s(x int, force bool)"},
	{"Commented-out code left in %s", "Dead commented-out code makes the file harder to read; delete it, it stays in the history.", "// %s(ctx)"},
	{"Inconsistent receiver names", "Methods of the type use both s and srv as the receiver name; pick one, as %s does.", "func (srv *Server) %s() {"},
	{"Unnecessary conversion of %s", "%s is already a string; converting it again allocates nothing but adds noise.", "string(%s)"},
	{"Test does not check the error", "The test calls %s and ignores its error, so a failure passes silently.", "%s(t.Context())"},
	{"Struct field alignment wastes memory", "Reordering the fields of %s from largest to smallest saves %d bytes per value.", "type %s struct {"},
	{"Use errors.Is instead of ==", "Comparing the error from %s with == misses wrapped errors; use errors.Is.", "if err == %s {"},
	{"Wrap the error with %%w to keep its cause", "The error from %s is formatted with %%v, which loses it for errors.Is and errors.As; use %%w.", "fmt.Errorf(\"read: %%v\", %s)"},
	{"Error message lacks context", "The error returned by %s does not say which file failed; include the path so the log is actionable.", "return err // %s"},
	{"Panic on malformed input", "%s calls panic when the header is malformed, so one bad request crashes the server; return an error.", "panic(%s)"},
	{"Unchecked type assertion", "The type assertion on %s panics when the value has another type; use the two-value form.", "v := %s.(string)"},
	{"Slice aliasing after append", "The result of append to %s may share its backing array with the caller's slice, so later writes corrupt it.", "out := append(%s, x)"},
	{"Weak random numbers for a token", "math/rand generates the session token in %s; it is predictable. Use crypto/rand.", "rand.Intn(%s)"},
	{"Missing authorization check", "The handler %s changes a record without checking that the caller owns it; any user can modify any record.", "store.Update(%s)"},
	{"Channel closed twice", "Both %s and the cleanup close the done channel; the second close panics.", "close(%s)"},
	{"Blocking call while holding a lock", "%s performs a network call while holding mu, serializing every request behind it.", "s.mu.Lock(); http.Get(%s)"},
	{"Float used for money", "Amounts in %s are float64, which cannot represent cents exactly; use integer cents.", "total += %s * 0.01"},
}

// secret is a committed credential as the secrets analyzer reports it.
func secret(rng *rand.Rand) review.Finding {
	return review.Finding{Title: "AWS access key committed", Agent: "analyzer:secrets", Rule: "aws-access-token",
		Category: review.CategorySecurity, Severity: review.SeverityCritical, FilePath: "testdata/creds.env",
		Description: fmt.Sprintf("An AWS access key id (AKIA%08d) is committed on line %d; rotate it.", rng.IntN(1e8), rng.IntN(300)+1),
		CodeSnippet: fmt.Sprintf("AWS_ACCESS_KEY_ID=AKIA%08d", rng.IntN(1e8))}
}

var words = []string{"config", "user", "session", "request", "token", "payload", "record", "order", "file", "cache"}

// ident is an identifier like a review cites: camelCase, so the
// normalisation sees it as a name.
func ident(rng *rand.Rand) string {
	w := words[rng.IntN(len(words))]
	v := []string{"load", "parse", "read", "save", "build", "check"}[rng.IntN(6)]
	return v + strings.ToUpper(w[:1]) + w[1:]
}

// nit is one occurrence of the nit pattern.
func nit(rng *rand.Rand) review.Finding {
	id := ident(rng)
	title := nitTitles[rng.IntN(len(nitTitles))]
	if strings.Contains(title, "%s") {
		title = fmt.Sprintf(title, id)
	}
	body := nitBodies[rng.IntN(len(nitBodies))]
	if strings.Contains(body, "%d") {
		body = fmt.Sprintf(body, rng.IntN(500)+1, id)
	} else {
		body = fmt.Sprintf(body, id)
	}
	code := fmt.Sprintf(nitCode[rng.IntN(len(nitCode))], words[rng.IntN(len(words))], words[rng.IntN(len(words))])
	return review.Finding{Title: title, Description: body, CodeSnippet: code, Category: review.CategoryQuality,
		Severity: review.SeverityStyle, Agent: "reviewer", FilePath: fmt.Sprintf("pkg/%s.go", id)}
}

// real is one occurrence of the real problem of kind k.
func real(rng *rand.Rand, k int) review.Finding {
	kind := realKinds[k]
	fill := func(s string) string {
		var args []any
		for i := 0; i+1 < len(s); i++ {
			switch {
			case s[i] == '%' && s[i+1] == '%':
				i++
			case s[i] == '%' && s[i+1] == 's':
				args = append(args, ident(rng))
			case s[i] == '%' && s[i+1] == 'd':
				args = append(args, rng.IntN(900)+2)
			}
		}
		return fmt.Sprintf(s, args...)
	}
	cats := []review.Category{review.CategoryBug, review.CategorySecurity, review.CategoryPerformance, review.CategoryQuality}
	return review.Finding{Title: fill(kind[0]), Description: fill(kind[1]), CodeSnippet: fill(kind[2]),
		Category: cats[k%len(cats)], Severity: review.SeverityWarning, Agent: "reviewer", FilePath: "pkg/x.go"}
}

// streamFigures are what a stream measured.
type streamFigures struct {
	// nitLater are the nit's occurrences after its N-th dismissal;
	// nitSuppressed how many of them were suppressed.
	nitLater, nitSuppressed int
	// reals are the real findings; realSuppressed those suppressed.
	reals, realSuppressed int
	// secrets are the secrets that matched at least N dismissals;
	// secretsSuppressed those suppressed (must be none).
	secretsMatching, secretsSuppressed int
}

// runStream reviews pulls synthetic pull requests in order, each against
// the most recent k dismissals before it, suppressing at n.
func runStream(seed uint64, pulls, k, n int) streamFigures {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var dismissals []memory.Dismissal
	realDismissed := make(map[int]int)
	var fig streamFigures
	nitDismissed := 0
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for pr := 1; pr <= pulls; pr++ {
		recent := dismissals[max(0, len(dismissals)-k):]
		mem := memory.New(recent, nil)
		type occurrence struct {
			f    review.Finding
			kind int // -1 nit, -2 secret
		}
		var occ []occurrence
		if rng.IntN(2) == 0 {
			occ = append(occ, occurrence{nit(rng), -1})
		}
		if pr%10 == 0 {
			occ = append(occ, occurrence{secret(rng), -2})
		}
		for range 2 + rng.IntN(3) {
			k := rng.IntN(len(realKinds))
			occ = append(occ, occurrence{real(rng, k), k})
		}
		for i, o := range occ {
			o.f.Fingerprint = fmt.Sprintf("fp-%d-%d", pr, i)
			matches := mem.Matches(o.f)
			_, sup := mem.Suppress([]review.Finding{o.f}, n)
			suppressed := len(sup) == 1
			switch {
			case o.kind == -1 && nitDismissed >= n:
				fig.nitLater++
				if suppressed {
					fig.nitSuppressed++
				}
			case o.kind == -2 && len(matches) >= n:
				fig.secretsMatching++
				if suppressed {
					fig.secretsSuppressed++
				}
			case o.kind >= 0:
				fig.reals++
				if suppressed {
					fig.realSuppressed++
				}
			}
			if suppressed {
				continue
			}
			// What writers do with what was posted: the nit and every
			// secret (test fixtures) dismissed each time; a real finding
			// now and then, never a kind N times.
			dismiss := o.kind < 0 || (realDismissed[o.kind] < n-1 && rng.IntN(6) == 0)
			if !dismiss {
				continue
			}
			at = at.Add(time.Minute)
			dismissals = append(dismissals, memory.Dismissal{PRNumber: pr, Fingerprint: o.f.Fingerprint, Finding: o.f,
				By: "writer", How: review.DismissedThreadResolved, At: at})
			switch {
			case o.kind == -1:
				nitDismissed++
			case o.kind >= 0:
				realDismissed[o.kind]++
			}
		}
	}
	return fig
}

// TestStream measures the memory on 200 synthetic pull requests: the nit
// is suppressed in at least 95% of its occurrences after its N-th
// dismissal, at most 2% of the real findings are, and no secret is, though
// they match their dismissals. go test -v -run TestStream ./review/memory/
// logs the figures.
func TestStream(t *testing.T) {
	const pulls, k, n = 200, 500, 3
	for _, seed := range []uint64{1, 2, 3} {
		fig := runStream(seed, pulls, k, n)
		nitRate := float64(fig.nitSuppressed) / float64(fig.nitLater)
		realRate := float64(fig.realSuppressed) / float64(fig.reals)
		t.Logf("seed %d: nit suppressed %d/%d (%.1f%%) after %d dismissals; real findings suppressed %d/%d (%.2f%%); secrets matching %d dismissals or more %d, suppressed %d",
			seed, fig.nitSuppressed, fig.nitLater, 100*nitRate, n, fig.realSuppressed, fig.reals, 100*realRate, n, fig.secretsMatching, fig.secretsSuppressed)
		if fig.nitLater < 50 || nitRate < 0.95 {
			t.Errorf("seed %d: the nit was suppressed in %d of its %d later occurrences (%.1f%%), want at least 95%%", seed, fig.nitSuppressed, fig.nitLater, 100*nitRate)
		}
		if realRate > 0.02 {
			t.Errorf("seed %d: %d of %d real findings were suppressed (%.2f%%), want at most 2%%", seed, fig.realSuppressed, fig.reals, 100*realRate)
		}
		if fig.secretsMatching == 0 || fig.secretsSuppressed != 0 {
			t.Errorf("seed %d: %d secrets matched %d dismissals, %d were suppressed; want some matching and none suppressed", seed, fig.secretsMatching, n, fig.secretsSuppressed)
		}
	}
}

// TestThresholdSeparates measures where Threshold stands between the
// similarities of the nit's rewordings with each other and those of
// findings of other kinds (the nit with real findings, real findings of
// different kinds): the lowest percentile of the first must be above it,
// the highest of the second below it. go test -v -run TestThresholdSeparates
// ./review/memory/ logs the figures.
func TestThresholdSeparates(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const count = 120
	nits, reals, kinds := make([]memory.Signature, count), make([]memory.Signature, count), make([]int, count)
	for i := range count {
		nits[i] = memory.Sign(nit(rng))
		kinds[i] = rng.IntN(len(realKinds))
		reals[i] = memory.Sign(real(rng, kinds[i]))
	}
	var same, other []float64
	for i := range count {
		for j := range count {
			if j > i {
				same = append(same, memory.Similarity(nits[i], nits[j]))
				if kinds[i] != kinds[j] {
					other = append(other, memory.Similarity(reals[i], reals[j]))
				}
			}
			other = append(other, memory.Similarity(nits[i], reals[j]))
		}
	}
	slices.Sort(same)
	slices.Sort(other)
	at := func(x []float64, p float64) float64 { return x[int(p*float64(len(x)-1))] }
	t.Logf("threshold %.2f; the nit's rewordings: p1 %.3f, p5 %.3f, median %.3f; other kinds: median %.3f, p99.9 %.3f, max %.3f",
		memory.Threshold, at(same, 0.01), at(same, 0.05), at(same, 0.5), at(other, 0.5), at(other, 0.999), at(other, 1))
	if at(same, 0.01) < memory.Threshold || at(other, 1) >= memory.Threshold {
		t.Errorf("threshold %.2f does not separate: rewordings p1 %.3f, other kinds max %.3f", memory.Threshold, at(same, 0.01), at(other, 1))
	}
}
