package diff

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

const noNewlineMarker = `\ No newline at end of file`

// Format writes d back as a git-style unified diff that Parse reads into the
// same files. It is how a diff is assembled from per-file patches (see
// ParsePatch) when a host will not return the whole diff. Index lines (blob
// ids) are not kept by Parse and are not written; added and deleted files
// without a known mode get "100644".
func Format(d *Diff) string {
	var b strings.Builder
	for _, f := range d.Files {
		formatFile(&b, f)
	}
	return b.String()
}

func formatFile(b *strings.Builder, f *File) {
	oldPath, newPath := f.OldPath, f.NewPath
	if oldPath == "" {
		oldPath = f.Path()
	}
	if newPath == "" {
		newPath = f.Path()
	}
	fmt.Fprintf(b, "diff --git %s %s\n", quotePath("a/", oldPath), quotePath("b/", newPath))
	switch f.Status {
	case Added:
		fmt.Fprintf(b, "new file mode %s\n", modeOrDefault(f.NewMode))
	case Deleted:
		fmt.Fprintf(b, "deleted file mode %s\n", modeOrDefault(f.OldMode))
	default:
		if f.OldMode != "" && f.NewMode != "" && f.OldMode != f.NewMode {
			fmt.Fprintf(b, "old mode %s\nnew mode %s\n", f.OldMode, f.NewMode)
		}
	}
	switch f.Status {
	case Renamed:
		fmt.Fprintf(b, "similarity index %d%%\nrename from %s\nrename to %s\n", f.Similarity, quotePath("", oldPath), quotePath("", newPath))
	case Copied:
		fmt.Fprintf(b, "similarity index %d%%\ncopy from %s\ncopy to %s\n", f.Similarity, quotePath("", oldPath), quotePath("", newPath))
	}
	oldName, newName := quotePath("a/", oldPath), quotePath("b/", newPath)
	switch f.Status {
	case Added:
		oldName = devNull
	case Deleted:
		newName = devNull
	}
	if f.Binary {
		fmt.Fprintf(b, "Binary files %s and %s differ\n", oldName, newName)
		return
	}
	if len(f.Hunks) == 0 {
		return
	}
	fmt.Fprintf(b, "--- %s%s\n+++ %s%s\n", oldName, nameTab(oldPath), newName, nameTab(newPath))
	for i := range f.Hunks {
		h := &f.Hunks[i]
		b.WriteString(hunkHeader(h))
		b.WriteByte('\n')
		for _, l := range h.Lines {
			b.WriteByte(byte(l.Kind))
			b.WriteString(l.Text)
			if l.NoNewline {
				b.WriteString("\n" + noNewlineMarker + "\n")
				continue
			}
			if l.CRLF {
				b.WriteByte('\r')
			}
			b.WriteByte('\n')
		}
	}
}

func modeOrDefault(m string) string {
	if m == "" {
		return "100644"
	}
	return m
}

// nameTab is the tab git appends to ---/+++ names that contain a space.
func nameTab(path string) string {
	if strings.ContainsRune(path, ' ') {
		return "\t"
	}
	return ""
}

// hunkHeader formats a hunk's "@@ -a,b +c,d @@ section" line as git does
// (a count of 1 is left out).
func hunkHeader(h *Hunk) string {
	s := "@@ -" + hunkRange(h.OldStart, h.OldLines) + " +" + hunkRange(h.NewStart, h.NewLines) + " @@"
	if h.Section != "" {
		s += " " + h.Section
	}
	return s
}

func hunkRange(start, n int) string {
	if n == 1 {
		return strconv.Itoa(start)
	}
	return strconv.Itoa(start) + "," + strconv.Itoa(n)
}

// quotePath writes prefix+path the way git does with core.quotepath on: in
// double quotes with C escapes when it holds control characters, quotes,
// backslashes or non-ASCII bytes.
func quotePath(prefix, path string) string {
	needs := false
	for i := 0; i < len(path); i++ {
		if c := path[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x7f {
			needs = true
			break
		}
	}
	if !needs {
		return prefix + path
	}
	var b strings.Builder
	b.WriteByte('"')
	b.WriteString(prefix)
	for i := 0; i < len(path); i++ {
		switch c := path[i]; c {
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\v':
			b.WriteString(`\v`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			if c < 0x20 || c >= 0x7f {
				fmt.Fprintf(&b, `\%03o`, c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// ShowPath is a path as a model or a person is shown it: as is when that
// is unambiguous, else as a Go string literal (`" settings.py"`) — when it
// starts or ends with white space, starts with a double quote, holds a
// control character or is not valid UTF-8. A path is data: it is never
// trimmed, and a quoted citation of it is unquoted by whoever looks it up.
func ShowPath(p string) string {
	if p == "" || !utf8.ValidString(p) || p[0] == '"' {
		return strconv.Quote(p)
	}
	first, _ := utf8.DecodeRuneInString(p)
	last, _ := utf8.DecodeLastRuneInString(p)
	if unicode.IsSpace(first) || unicode.IsSpace(last) {
		return strconv.Quote(p)
	}
	for _, r := range p {
		if unicode.IsControl(r) || r == '\u00a0' || r == '\u2028' || r == '\u2029' {
			return strconv.Quote(p)
		}
	}
	return p
}
