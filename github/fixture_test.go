package github

import (
	"fmt"
	"strings"

	"github.com/mergeguard/mergeguard/github/githubtest"
)

// goFile returns a Go file of n lines whose line i (1-based) is recognisable.
func goFile(name string, n int) string {
	var b strings.Builder
	b.WriteString("package " + name + "\n")
	for i := 2; i <= n; i++ {
		fmt.Fprintf(&b, "var v%d = %d // %s line %d\n", i, i, name, i)
	}
	return b.String()
}

// replaceLine returns content with line (1-based) replaced by text.
func replaceLine(content string, line int, text string) string {
	lines := strings.SplitAfter(content, "\n")
	lines[line-1] = text + "\n"
	return strings.Join(lines, "")
}

// modifiedDiff is git's diff of a one-line replacement at line of a file of
// n lines (3 lines of context).
func modifiedDiff(path, before, after string, line, n int) string {
	bl := strings.Split(strings.TrimSuffix(before, "\n"), "\n")
	al := strings.Split(strings.TrimSuffix(after, "\n"), "\n")
	start := max(line-3, 1)
	end := min(line+3, n)
	var b strings.Builder
	fmt.Fprintf(&b, "diff --git a/%s b/%s\nindex 1111111..2222222 100644\n--- a/%s\n+++ b/%s\n", path, path, path, path)
	fmt.Fprintf(&b, "@@ -%d,%d +%d,%d @@\n", start, end-start+1, start, end-start+1)
	for i := start; i <= end; i++ {
		if i == line {
			fmt.Fprintf(&b, "-%s\n+%s\n", bl[i-1], al[i-1])
			continue
		}
		fmt.Fprintf(&b, " %s\n", bl[i-1])
	}
	return b.String()
}

// addedDiff is git's diff of a new file.
func addedDiff(path, content string) string {
	lines := strings.Split(strings.TrimSuffix(content, "\n"), "\n")
	var b strings.Builder
	fmt.Fprintf(&b, "diff --git a/%s b/%s\nnew file mode 100644\nindex 0000000..3333333\n--- /dev/null\n+++ b/%s\n@@ -0,0 +1,%d @@\n", path, path, path, len(lines))
	for _, l := range lines {
		b.WriteString("+" + l + "\n")
	}
	return b.String()
}

// deletedDiff is git's diff of a deleted file.
func deletedDiff(path, content string) string {
	lines := strings.Split(strings.TrimSuffix(content, "\n"), "\n")
	var b strings.Builder
	fmt.Fprintf(&b, "diff --git a/%s b/%s\ndeleted file mode 100644\nindex 4444444..0000000\n--- a/%s\n+++ /dev/null\n@@ -1,%d +0,0 @@\n", path, path, path, len(lines))
	for _, l := range lines {
		b.WriteString("-" + l + "\n")
	}
	return b.String()
}

// fileLines is the length of the files of testPR.
const fileLines = 40

// testPR returns pull request acme/widgets#7 changing n files: n-2 Go files
// get line 10 replaced, one file is added and one deleted. The repository
// also holds files the pull request does not touch.
func testPR(n int) githubtest.PR {
	base := map[string]string{
		"README.md":          "# widgets\n",
		"docs/guide.md":      "guide\n",
		"internal/keep.go":   goFile("keep", fileLines),
		"internal/delete.go": goFile("delete", fileLines),
	}
	head := map[string]string{
		"README.md":        base["README.md"],
		"docs/guide.md":    base["docs/guide.md"],
		"internal/keep.go": base["internal/keep.go"],
		"internal/new.go":  goFile("new", 12),
	}
	var d strings.Builder
	for i := range n - 2 {
		path := fmt.Sprintf("pkg/p%02d/file.go", i)
		before := goFile(fmt.Sprintf("p%02d", i), fileLines)
		after := replaceLine(before, 10, fmt.Sprintf("var v10 = compute(%d) // changed", i))
		base[path], head[path] = before, after
		d.WriteString(modifiedDiff(path, before, after, 10, fileLines))
	}
	d.WriteString(addedDiff("internal/new.go", head["internal/new.go"]))
	d.WriteString(deletedDiff("internal/delete.go", base["internal/delete.go"]))
	return githubtest.PR{
		Owner: "acme", Repo: "widgets", Number: 7,
		Title: "Compute the widgets", Body: "Replaces constants.",
		Labels: []string{"enhancement"},
		Base:   base, Head: head,
		Diff: d.String(),
		Commits: []githubtest.Commit{
			{Message: "Start computing", Author: "alice"},
			{Message: "Compute more", Author: "bob"},
			{Message: "Finish", Author: "alice"},
		},
	}
}
