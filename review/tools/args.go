package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mergeguard/mergeguard/review/text"
)

// args are a tool call's arguments, decoded leniently: null is absent, and
// numbers may come as numeric strings, as small models often send them.
// Unknown arguments are ignored.
type args map[string]json.RawMessage

func parseArgs(s string) (args, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return args{}, nil
	}
	if !json.Valid([]byte(s)) {
		return nil, errors.New(`the arguments are not valid JSON; send an object such as {"file_path": "main.go"}`)
	}
	var a args
	if err := json.Unmarshal([]byte(s), &a); err != nil {
		return nil, errors.New(`the arguments must be a JSON object such as {"file_path": "main.go"}`)
	}
	if a == nil {
		a = args{}
	}
	return a, nil
}

// raw returns an argument's JSON, or nil when it is absent or null.
func (a args) raw(name string) json.RawMessage {
	v := bytes.TrimSpace(a[name])
	if len(v) == 0 || string(v) == "null" {
		return nil
	}
	return v
}

// text returns a string argument, def when absent.
func (a args) text(name, def string, required bool) (string, error) {
	v := a.raw(name)
	if v == nil {
		if required {
			return "", fmt.Errorf("argument %s is required", name)
		}
		return def, nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", fmt.Errorf("argument %s must be a string, got %s", name, text.Clip(string(v), 80))
	}
	return s, nil
}

// number returns an integer argument, def when absent.
func (a args) number(name string, def int, required bool) (int, error) {
	v := a.raw(name)
	if v == nil {
		if required {
			return 0, fmt.Errorf("argument %s is required", name)
		}
		return def, nil
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		v = []byte(strings.TrimSpace(s))
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil || f != float64(int(f)) {
		return 0, fmt.Errorf("argument %s must be an integer, got %s", name, text.Clip(string(v), 80))
	}
	return int(f), nil
}

// cleanPath checks a path the model gave and returns it relative to the
// repository root, slash-separated: "./a//b" is "a/b"; absolute paths,
// paths leaving the repository and NUL bytes are refused. dirOK accepts
// "." for the root. The path is otherwise taken byte for byte: white space
// at either end is part of a file's name (" settings.py" is not
// "settings.py").
func cleanPath(p string, dirOK bool) (string, error) {
	switch {
	case p == "":
		return "", errors.New("the path is empty")
	case strings.ContainsRune(p, 0):
		return "", errors.New("the path contains a NUL byte")
	case !utf8.ValidString(p):
		return "", errors.New("the path is not valid UTF-8")
	case strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) || (len(p) > 2 && p[1] == ':' && (p[2] == '/' || p[2] == '\\')):
		return "", fmt.Errorf("absolute path %q: give a path relative to the repository root", text.Clip(p, 80))
	}
	c := path.Clean(p)
	switch {
	case c == ".." || strings.HasPrefix(c, "../"):
		return "", fmt.Errorf("path %q is outside the repository", text.Clip(p, 80))
	case c == "." && !dirOK:
		return "", errors.New("the path names the repository root, not a file")
	}
	return c, nil
}

// splitLines splits content into lines without their endings; a final
// line ending does not start another line. It reports whether any line
// ended in CRLF.
func splitLines(content string) (lines []string, crlf bool) {
	if content == "" {
		return nil, false
	}
	lines = strings.Split(strings.TrimSuffix(content, "\n"), "\n")
	for i, l := range lines {
		if strings.HasSuffix(l, "\r") {
			lines[i] = l[:len(l)-1]
			crlf = true
		}
	}
	return lines, crlf
}

// showLine is a line as shown to the model: cut when very long.
func showLine(l string) string {
	if len(l) > maxLineBytes {
		return text.PrefixBytes(l, maxLineBytes) + fmt.Sprintf(" [... line cut, %d bytes]", len(l))
	}
	return l
}

// output accumulates a result up to a size, keeping room for a closing
// note.
type output struct {
	b     strings.Builder
	limit int
	full  bool
}

// noteRoom is kept free for the note that says where the output was cut.
const noteRoom = 300

func newOutput(limit int) *output { return &output{limit: max(limit-noteRoom, 1)} }

// line appends s and a newline; it reports false, appending nothing, once
// the output is full.
func (o *output) line(s string) bool {
	if o.full || o.b.Len()+len(s)+1 > o.limit {
		o.full = true
		return false
	}
	o.b.WriteString(s)
	o.b.WriteByte('\n')
	return true
}

// note appends a closing note, whatever the size.
func (o *output) note(s string) { o.b.WriteString(s + "\n") }

func (o *output) String() string { return o.b.String() }

// plural is "1 file", "2 files".
func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
