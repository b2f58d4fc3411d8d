package codectx

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/diff"
)

// slowRepo is a repo whose reads take delay each: a loaded machine or a
// slow GitHub.
type slowRepo struct {
	repo
	delay time.Duration
}

func (r slowRepo) ReadFile(ctx context.Context, p string, rev review.Revision) ([]byte, error) {
	time.Sleep(r.delay)
	return r.repo.ReadFile(ctx, p, rev)
}

// prompt renders every snippet and note of a result, as a prompt shows them.
func prompt(res Result) string {
	var b strings.Builder
	for _, p := range sortedPaths(res.ByFile) {
		for _, s := range res.ByFile[p] {
			b.WriteString(Render(s))
		}
	}
	b.WriteString(strings.Join(res.Notes, "\n"))
	return b.String()
}

func sortedPaths(m map[string][]Snippet) []string {
	var out []string
	for p := range m {
		out = append(out, p)
	}
	return sortStrings(out)
}

// TestCollectSameOnSlowMachine collects the same change on an idle
// machine and on a slow one (every read delayed, one core): the prompts
// are the same byte for byte.
func TestCollectSameOnSlowMachine(t *testing.T) {
	if !Available {
		t.Skip("no parser without cgo")
	}
	base, head, d := priceChange(t)
	lim := testLimits()
	idle, err := Collect(t.Context(), merged(base, head), d.Files, Options{Limits: lim})
	if err != nil {
		t.Fatal(err)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	slow, err := Collect(t.Context(), slowRepo{merged(base, head), 20 * time.Millisecond}, d.Files, Options{Limits: lim})
	if err != nil {
		t.Fatal(err)
	}
	if prompt(idle) == "" {
		t.Fatal("no context collected")
	}
	if diff := cmp.Diff(prompt(idle), prompt(slow)); diff != "" {
		t.Errorf("prompt on a slow machine differs (-idle +slow):\n%s", diff)
	}
}

// TestCollectDeadlineIsAnError: a collection that hits the safety
// deadline fails and returns no snippets, never a part of the context.
func TestCollectDeadlineIsAnError(t *testing.T) {
	if !Available {
		t.Skip("no parser without cgo")
	}
	base, head, d := priceChange(t)
	res, err := Collect(t.Context(), slowRepo{merged(base, head), 20 * time.Millisecond}, d.Files, Options{Limits: Limits{Deadline: 50 * time.Millisecond}})
	if !errors.Is(err, errDeadline) {
		t.Fatalf("err = %v, want errDeadline", err)
	}
	if n := len(res.ByFile); n != 0 {
		t.Errorf("%d files got snippets, want none", n)
	}
}

// priceChange is a changed function with 40 callers, one a file.
func priceChange(t *testing.T) (base, head repo, d *diff.Diff) {
	t.Helper()
	base = repo{"core/price.py": "def price(cents):\n    return cents / 100\n"}
	for i := range 40 {
		base[fmt.Sprintf("shop/m%02d.py", i)] = fmt.Sprintf("from core.price import price\n\n\ndef show%d(c):\n    return price(c)\n", i)
	}
	head = repo{"core/price.py": "def price(cents, rate):\n    return cents * rate / 100\n"}
	return base, head, gitDiff(t, base, head)
}
