package diff_test

import (
	"testing"

	"github.com/mergeguard/mergeguard/review/diff"
)

func TestAddedText(t *testing.T) {
	d, err := diff.ParseString("diff --git a/f.go b/f.go\n--- a/f.go\n+++ b/f.go\n@@ -1,2 +1,3 @@\n keep\n-old\n+new one\n+new two\n")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := d.Files[0].AddedText(), "new one\nnew two\n"; got != want {
		t.Errorf("AddedText() = %q, want %q", got, want)
	}
}
