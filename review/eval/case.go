// Package eval measures review quality: it reads evaluation cases (changes
// with golden comments, the defects a good review should report), matches a
// review's findings to them, and scores the matches as precision, recall
// and F1, overall, per severity and per case. It also measures context
// recall: whether the first prompt of a review holds the lines a reader
// needs to see a case's defect.
//
// The scoring (match.go, score.go, report.go, context.go) is pure; run.go
// runs the review pipeline over the cases, in parallel and resumably.
package eval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Case is one change to review and what a good review of it reports.
// Exactly one of Diff, Repo (with Base and Head) and Tree says where the
// change is.
type Case struct {
	// ID names the case; unique in a dataset.
	ID string `json:"id"`
	// Language and Kind describe the case for the reports (the kind of
	// planted defect, or "clean").
	Language string `json:"language,omitempty"`
	Kind     string `json:"kind,omitempty"`
	Title    string `json:"title,omitempty"`
	Body     string `json:"body,omitempty"`
	// Diff is the change as a unified diff (git style).
	Diff string `json:"diff,omitempty"`
	// Repo, Base and Head are a local git repository and two revisions.
	Repo string `json:"repo,omitempty"`
	Base string `json:"base,omitempty"`
	Head string `json:"head,omitempty"`
	// Tree is a directory holding base/, the repository before the change,
	// and head/, the files the change adds or modifies (each replaces the
	// base file of the same path); relative to the dataset file.
	Tree string `json:"tree,omitempty"`
	// Golden are the comments a good review makes; none for a clean case.
	Golden []Golden `json:"golden"`
	// Clean says the change has no defect: every finding on it is a false
	// alarm.
	Clean bool `json:"clean"`
	// ContextLines are the lines a reader needs to see the defect,
	// possibly outside the diff's hunks.
	ContextLines []LineRef `json:"context_lines,omitempty"`
	// Why documents the defect: what it is and why it is a bug.
	Why string `json:"why,omitempty"`
}

// Golden is one expected review comment.
type Golden struct {
	// File is the path of the file the comment is on; "" when unknown
	// (Martian's dataset), which only a judge can match.
	File string `json:"file,omitempty"`
	// Line, or StartLine..EndLine, are head-side line numbers; zero when
	// unknown.
	Line      int    `json:"line,omitempty"`
	StartLine int    `json:"start_line,omitempty"`
	EndLine   int    `json:"end_line,omitempty"`
	Severity  string `json:"severity,omitempty"`
	Category  string `json:"category,omitempty"`
	Text      string `json:"text"`
}

// Lines returns the golden comment's line range, 0, 0 when unknown.
func (g Golden) Lines() (start, end int) {
	if g.Line > 0 {
		return g.Line, g.Line
	}
	if g.StartLine > 0 {
		return g.StartLine, max(g.EndLine, g.StartLine)
	}
	return 0, 0
}

// LineRef is a range of lines of one file at the head revision (or the
// base revision when Side is "base").
type LineRef struct {
	File      string `json:"file"`
	StartLine int    `json:"start_line"`
	EndLine   int    `json:"end_line"`
	Side      string `json:"side,omitempty"`
}

// String is path:start-end.
func (r LineRef) String() string {
	s := fmt.Sprintf("%s:%d-%d", r.File, r.StartLine, r.EndLine)
	if r.Side == "base" {
		s += " (base)"
	}
	return s
}

// check says what is wrong with the case, nil when nothing.
func (c Case) check() error {
	n := 0
	for _, set := range []bool{c.Diff != "", c.Repo != "", c.Tree != ""} {
		if set {
			n++
		}
	}
	var errs []error
	if c.ID == "" {
		errs = append(errs, errors.New("no id"))
	}
	if n != 1 {
		errs = append(errs, errors.New("want exactly one of diff, repo or tree"))
	}
	if c.Clean && len(c.Golden) > 0 {
		errs = append(errs, errors.New("a clean case has golden comments"))
	}
	for i, g := range c.Golden {
		if strings.TrimSpace(g.Text) == "" {
			errs = append(errs, fmt.Errorf("golden %d: no text", i+1))
		}
		if s, e := g.Lines(); s > 0 && g.File == "" || e < s {
			errs = append(errs, fmt.Errorf("golden %d: lines without a file, or end before start", i+1))
		}
	}
	for i, r := range c.ContextLines {
		if r.File == "" || r.StartLine < 1 || r.EndLine < r.StartLine {
			errs = append(errs, fmt.Errorf("context_lines %d: want a file and 1 <= start_line <= end_line", i+1))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("case %q: %w", c.ID, err)
	}
	return nil
}

// ParseJSONL reads cases, one JSON object a line (blank lines and lines
// starting with # are skipped). A case without an id is named line-N.
// Relative Tree and Repo paths are made relative to dir.
func ParseJSONL(data []byte, dir string) ([]Case, error) {
	var cases []Case
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		var c Case
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if c.ID == "" {
			c.ID = fmt.Sprintf("line-%d", n)
		}
		cases = append(cases, c.resolve(dir))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read cases: %w", err)
	}
	return cases, checkAll(cases)
}

// resolve makes the case's relative paths relative to dir.
func (c Case) resolve(dir string) Case {
	if c.Tree != "" && !filepath.IsAbs(c.Tree) {
		c.Tree = filepath.Join(dir, c.Tree)
	}
	if c.Repo != "" && !filepath.IsAbs(c.Repo) {
		c.Repo = filepath.Join(dir, c.Repo)
	}
	return c
}

// checkAll checks every case and that ids are unique.
func checkAll(cases []Case) error {
	var errs []error
	seen := map[string]bool{}
	for _, c := range cases {
		if err := c.check(); err != nil {
			errs = append(errs, err)
		}
		if seen[c.ID] {
			errs = append(errs, fmt.Errorf("case %q: id used twice", c.ID))
		}
		seen[c.ID] = true
	}
	return errors.Join(errs...)
}

// LoadCorpus reads a corpus directory: every sub-directory of dir/cases
// holding a case.json is one case, whose Tree is that sub-directory and
// whose ID defaults to its name. Cases are ordered by ID.
func LoadCorpus(dir string) ([]Case, error) {
	entries, err := os.ReadDir(filepath.Join(dir, "cases"))
	if err != nil {
		return nil, fmt.Errorf("read corpus: %w", err)
	}
	var cases []Case
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		caseDir := filepath.Join(dir, "cases", e.Name())
		data, err := os.ReadFile(filepath.Join(caseDir, "case.json"))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read corpus: %w", err)
		}
		var c Case
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(caseDir, "case.json"), err)
		}
		c.ID = cmpOr(c.ID, e.Name())
		c.Tree = caseDir
		cases = append(cases, c)
	}
	slices.SortFunc(cases, func(a, b Case) int { return strings.Compare(a.ID, b.ID) })
	return cases, checkAll(cases)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
