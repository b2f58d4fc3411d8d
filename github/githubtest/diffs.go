package githubtest

import (
	"fmt"
	"strings"
)

// AddedFileDiff returns git's diff section of a new file at path holding
// content, which is not empty and ends with a newline: the section a PR's
// Diff holds for each file the pull request adds.
func AddedFileDiff(path, content string) string {
	lines := strings.SplitAfter(strings.TrimSuffix(content, "\n"), "\n")
	var b strings.Builder
	fmt.Fprintf(&b, "diff --git a/%s b/%s\nnew file mode 100644\nindex 0000000..%s\n--- /dev/null\n+++ b/%s\n@@ -0,0 +1,%d @@\n",
		path, path, BlobSHA(content)[:7], path, len(lines))
	for _, l := range lines {
		b.WriteString("+" + strings.TrimSuffix(l, "\n") + "\n")
	}
	return b.String()
}
