package main

import (
	"bufio"
	"strconv"
	"strings"
)

// changedLines parses `git diff -U0` text and returns, for each Go file
// the head has (not deleted, not under vendor/), its changed head lines:
// the lines added, and for a hunk that only removes lines, the head line
// after them (the last line when they ended the file), as
// review/codectx marks a removal. lineCount gives a head file's number of
// lines.
func changedLines(text string, lineCount func(path string) int) map[string]map[int]bool {
	out := map[string]map[int]bool{}
	var cur map[int]bool
	var path string
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "diff --git "):
			cur, path = nil, ""
		case strings.HasPrefix(l, "+++ "):
			p := strings.TrimPrefix(l, "+++ ")
			if !strings.HasPrefix(p, "b/") || !strings.HasSuffix(p, ".go") || vendored(p[2:]) {
				continue
			}
			path = p[2:]
			cur = map[int]bool{}
			out[path] = cur
		case strings.HasPrefix(l, "@@ ") && cur != nil:
			start, n, ok := newRange(l)
			if !ok {
				continue
			}
			for i := range n {
				cur[start+i] = true
			}
			if n == 0 {
				next := start + 1
				if next > lineCount(path) {
					next = max(start, 1)
				}
				cur[next] = true
			}
		}
	}
	for p, ls := range out {
		if len(ls) == 0 {
			delete(out, p)
		}
	}
	return out
}

// newRange reads the head range "+c,d" of a hunk header "@@ -a,b +c,d @@".
func newRange(header string) (start, n int, ok bool) {
	fields := strings.Fields(header)
	if len(fields) < 3 || !strings.HasPrefix(fields[2], "+") {
		return 0, 0, false
	}
	s, c, found := strings.Cut(fields[2][1:], ",")
	start, err := strconv.Atoi(s)
	if err != nil {
		return 0, 0, false
	}
	n = 1
	if found {
		if n, err = strconv.Atoi(c); err != nil {
			return 0, 0, false
		}
	}
	return start, n, true
}

// vendored reports whether a repository path is under a vendor directory.
func vendored(p string) bool {
	return strings.HasPrefix(p, "vendor/") || strings.Contains(p, "/vendor/")
}
