package githubtest_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/github/githubtest"
)

func TestAddedFileDiff(t *testing.T) {
	tests := []struct {
		name, path, content string
		want                string // from `git diff --cached` after `git add`
	}{
		{
			name:    "go file",
			path:    "store/a.go",
			content: "package store\n\n// A is a.\nfunc A() {}\n",
			want: "diff --git a/store/a.go b/store/a.go\nnew file mode 100644\nindex 0000000..913a9e9\n" +
				"--- /dev/null\n+++ b/store/a.go\n@@ -0,0 +1,4 @@\n+package store\n+\n+// A is a.\n+func A() {}\n",
		},
		{
			name:    "two lines",
			path:    "README.md",
			content: "Hello\nworld\n",
			want: "diff --git a/README.md b/README.md\nnew file mode 100644\nindex 0000000..65a56c3\n" +
				"--- /dev/null\n+++ b/README.md\n@@ -0,0 +1,2 @@\n+Hello\n+world\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, githubtest.AddedFileDiff(tt.path, tt.content)); diff != "" {
				t.Errorf("AddedFileDiff(%q) (-want +got):\n%s", tt.path, diff)
			}
		})
	}
}
