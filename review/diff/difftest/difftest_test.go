package difftest_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/review/diff"
	"github.com/mergeguard/mergeguard/review/diff/difftest"
)

// TestLargeParses checks that a generated diff parses into what its Stats
// say, and that the same size gives the same diff.
func TestLargeParses(t *testing.T) {
	const size = 2 << 20
	text, st := difftest.Large(size)
	if len(text) < size || st.Bytes != len(text) {
		t.Fatalf("%d bytes (stats say %d), want at least %d", len(text), st.Bytes, size)
	}
	if again, _ := difftest.Large(size); again != text {
		t.Fatal("two diffs of the same size differ")
	}
	d, err := diff.ParseString(text)
	if err != nil {
		t.Fatal(err)
	}
	got := difftest.Stats{Bytes: len(text), Files: len(d.Files), Secrets: st.Secrets}
	for _, f := range d.Files {
		got.Additions += f.Additions
		got.Deletions += f.Deletions
	}
	if diff := cmp.Diff(st, got); diff != "" {
		t.Errorf("stats (-generated +parsed):\n%s", diff)
	}
	if st.Secrets == 0 || st.Files < 200 || st.Additions < 2*st.Deletions {
		t.Errorf("stats %+v: want secrets, hundreds of files, about 2.8 added lines per deleted one", st)
	}
}
