package eval

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The truth of the real-world set (testdata/eval-real): what a go/types
// program (bench/cmd/ctxtruth) and the tools' own CLIs (shellcheck,
// actionlint, go vet; scripts/eval-real/truth.sh) say about pinned commits
// of public repositories.

// ContextTruth is what a reader of a Go commit would open: the
// definitions its changed lines use and the call sites of the functions
// it changes, resolved with go/types over the module.
type ContextTruth struct {
	// Repo is "owner/name", Commit the full hash of the head commit (its
	// first parent is the base).
	Repo   string `json:"repo"`
	Commit string `json:"commit"`
	// Definitions are the functions, methods, types, constants and
	// package-level variables of the module used on changed lines.
	Definitions []TruthDefinition `json:"definitions"`
	// Callers are the references, outside the function and off the
	// changed lines, to the functions whose bodies the commit changes.
	Callers []TruthCaller `json:"callers"`
	// Notes say what the program could not do (a module not downloaded, a
	// package with type errors).
	Notes []string `json:"notes,omitempty"`
}

// TruthDefinition is a declaration a changed line uses.
type TruthDefinition struct {
	Name string `json:"name"`
	// Kind is func, method, type, const or var.
	Kind string `json:"kind"`
	// Path is repository-relative; Line is the line of the declared name.
	Path string `json:"path"`
	Line int    `json:"line"`
}

// TruthCaller is a reference to a changed function.
type TruthCaller struct {
	// Of names the function: "pkgpath.Func" or "pkgpath.(Recv).Meth".
	Of   string `json:"of"`
	Path string `json:"path"`
	Line int    `json:"line"`
	// Call is true when the reference is the function of a call
	// expression (f(), x.M()), false for a value (f, x.M).
	Call bool `json:"call"`
}

// AnalyzerTruth is what the tools' own CLIs report on the lines a commit
// added.
type AnalyzerTruth struct {
	Repo   string `json:"repo"`
	Commit string `json:"commit"`
	// Tools are the versions of the tools that made the truth.
	Tools map[string]string `json:"tools,omitempty"`
	// Checked are the files (for govet, the package directories) each
	// tool was run on.
	Checked  []CheckedFile `json:"checked"`
	Findings []ToolFinding `json:"findings"`
	Notes    []string      `json:"notes,omitempty"`
}

// CheckedFile is a file a tool was run on.
type CheckedFile struct {
	Tool string `json:"tool"`
	Path string `json:"path"`
}

// ToolFinding is one finding of a tool, or of MergeGuard's linter that
// runs it: the tool (shellcheck, actionlint, govet), its own rule id
// (SC2086, expression, printf), the repository path and the line.
type ToolFinding struct {
	Tool string `json:"tool"`
	Rule string `json:"rule"`
	Path string `json:"path"`
	Line int    `json:"line"`
}

func (f ToolFinding) String() string {
	return fmt.Sprintf("%s %s %s:%d", f.Tool, f.Rule, f.Path, f.Line)
}

// RealCase is one commit of the real-world set with its truth: analyzer
// truth, context truth or both.
type RealCase struct {
	Repo   string
	Commit string
	// Analyzers and Context are nil when the set has no such truth for
	// the commit.
	Analyzers *AnalyzerTruth
	Context   *ContextTruth
}

// ID is "owner/name@<12 hex>".
func (c RealCase) ID() string { return c.Repo + "@" + c.Commit[:min(12, len(c.Commit))] }

// maxTruthBytes bounds one truth file.
const maxTruthBytes = 4 << 20

// LoadReal reads the real-world set in dir: dir/analyzers/*.json and
// dir/context/*.json, one file per commit, merged by commit and ordered
// by repository and file name.
func LoadReal(dir string) ([]RealCase, error) {
	byKey := map[string]*RealCase{}
	var order []string
	get := func(repo, commit string) (*RealCase, error) {
		if repo == "" || len(commit) != 40 {
			return nil, fmt.Errorf("want a repository and a 40-hex commit, got %q %q", repo, commit)
		}
		k := repo + " " + commit
		if c, ok := byKey[k]; ok {
			return c, nil
		}
		c := &RealCase{Repo: repo, Commit: commit}
		byKey[k] = c
		order = append(order, k)
		return c, nil
	}
	err := eachJSON(filepath.Join(dir, "analyzers"), func(b []byte) error {
		var t AnalyzerTruth
		if err := json.Unmarshal(b, &t); err != nil {
			return err
		}
		c, err := get(t.Repo, t.Commit)
		if err == nil {
			c.Analyzers = &t
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	err = eachJSON(filepath.Join(dir, "context"), func(b []byte) error {
		var t ContextTruth
		if err := json.Unmarshal(b, &t); err != nil {
			return err
		}
		c, err := get(t.Repo, t.Commit)
		if err == nil {
			c.Context = &t
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(order) == 0 {
		return nil, fmt.Errorf("%s: no truth files in analyzers/ or context/", dir)
	}
	slices.Sort(order)
	out := make([]RealCase, 0, len(order))
	for _, k := range order {
		out = append(out, *byKey[k])
	}
	return out, nil
}

// eachJSON calls fn with each *.json file of dir, in name order; a
// missing dir has none.
func eachJSON(dir string, fn func(b []byte) error) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read the real-world set: %w", err)
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		info, err := e.Info()
		if err != nil {
			return fmt.Errorf("read the real-world set: %w", err)
		}
		if info.Size() > maxTruthBytes {
			return fmt.Errorf("%s: larger than %d bytes", p, maxTruthBytes)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("read the real-world set: %w", err)
		}
		if err := fn(b); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
	}
	return nil
}
