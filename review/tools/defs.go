package tools

import (
	"encoding/json"

	openai "github.com/sashabaranov/go-openai"
)

// Tool names (docs/architecture.md).
const (
	ChangedFiles   = "changed_files"
	CommitMessages = "get_commit_messages"
	DiffFile       = "diff_file"
	ReadFilePart   = "read_file_part"
	GetFileContext = "get_file_context" // an alias of read_file_part
	GetBlame       = "get_blame"
	SearchInFiles  = "search_in_files"
	ListFiles      = "list_files"
)

// param describes one argument of a tool.
type param struct {
	name, typ, desc string
	required        bool
	enum            []string
}

type toolDef struct {
	name, desc string
	params     []param
}

// defs returns the tools in the order they are offered.
func defs() []toolDef {
	fileParam := param{name: "file_path", typ: "string", required: true,
		desc: "Path of the file, relative to the repository root, as changed_files lists it (e.g. \"src/main.go\")."}
	readParams := []param{
		fileParam,
		{name: "start_line", typ: "integer", desc: "First line to read (1-based). Default 1."},
		{name: "end_line", typ: "integer", desc: "Last line to read, inclusive. Default: start_line + 399; at most 400 lines are returned per call."},
		{name: "branch", typ: "string", enum: []string{"head", "base"},
			desc: "\"head\" (default) reads the file as changed by the pull request, \"base\" as it was before."},
	}
	return []toolDef{
		{name: ChangedFiles, desc: "List the files changed by the pull request: status (added, modified, removed, renamed...), " +
			"path, previous path of renamed files, lines added and removed."},
		{name: CommitMessages, desc: "List the pull request's commits, oldest first: short SHA, date, author and message.",
			params: []param{{name: "max_commits", typ: "integer", desc: "Most recent commits to list. Default 20, at most 100."}}},
		{name: DiffFile, desc: "Show the diff of one changed file, hunk by hunk, with new-side line numbers " +
			"(cite these in findings). Long diffs are paginated by hunk: ask for later hunks with start_hunk.",
			params: []param{
				fileParam,
				{name: "context_lines", typ: "integer", desc: "Unchanged lines shown around each change, 1 to 3. Default 3."},
				{name: "start_hunk", typ: "integer", desc: "First hunk to show (1-based). Default 1."},
				{name: "end_hunk", typ: "integer", desc: "Last hunk to show, inclusive. Default 20."},
			}},
		{name: ReadFilePart, desc: "Read lines of a file, with line numbers, at the head (after the change) or base (before) revision. " +
			"Use it to see code around a change that the diff does not show.", params: readParams},
		{name: GetFileContext, desc: "Same as read_file_part: read lines of a file with line numbers at the head or base revision.",
			params: readParams},
		{name: GetBlame, desc: "Tell who last changed a line of a file at the head revision, when, and in which commit (SHA and message).",
			params: []param{fileParam, {name: "line_number", typ: "integer", required: true, desc: "The 1-based line number."}}},
		{name: SearchInFiles, desc: "Search the repository's files at the head revision for a regular expression (RE2 syntax, " +
			"as in Go), like grep -n. Changed files are searched first.",
			params: []param{
				{name: "pattern", typ: "string", required: true, desc: "Regular expression to find, e.g. \"func Parse\\\\(\" or \"(?i)todo\"."},
				{name: "file_pattern", typ: "string", desc: "Glob restricting the files searched, e.g. \"**/*.go\" or \"src/**\". " +
					"A glob without '/' matches file names in any directory (\"*.py\")."},
				{name: "context_lines", typ: "integer", desc: "Lines shown before and after each match, 0 to 10. Default 2."},
				{name: "max_results", typ: "integer", desc: "Most matches to return. Default 50, at most 200."},
			}},
		{name: ListFiles, desc: "List the repository's files at the head revision under a directory, optionally filtered by a glob.",
			params: []param{
				{name: "directory", typ: "string", desc: "Directory to list, relative to the repository root. Default \".\" (everything)."},
				{name: "pattern", typ: "string", desc: "Glob the paths must match, e.g. \"**/*_test.go\"; without '/' it matches file names."},
			}},
	}
}

// Definitions returns the tools to offer a model, in a stable order. With
// llm.strict_tools the schemas follow OpenAI's strict mode (every property
// required, optional ones nullable, no additional properties); otherwise
// optional arguments may be omitted, which every OpenAI-compatible server
// and small open models handle.
func (t *Toolbox) Definitions() []openai.Tool {
	var out []openai.Tool
	for _, d := range defs() {
		out = append(out, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name:        d.name,
			Description: d.desc,
			Strict:      t.cfg.StrictTools,
			Parameters:  schema(d.params, t.cfg.StrictTools),
		}})
	}
	return out
}

// schema builds the JSON schema of a tool's parameters.
func schema(params []param, strict bool) json.RawMessage {
	props := map[string]any{}
	required := []string{}
	for _, p := range params {
		prop := map[string]any{"type": p.typ, "description": p.desc}
		if len(p.enum) > 0 {
			prop["enum"] = p.enum
		}
		switch {
		case p.required:
			required = append(required, p.name)
		case strict:
			// Optional in strict mode: required but nullable.
			prop["type"] = []string{p.typ, "null"}
			if len(p.enum) > 0 {
				prop["enum"] = append(append([]any{}, toAny(p.enum)...), nil)
			}
			required = append(required, p.name)
		}
		props[p.name] = prop
	}
	// Maps and slices of strings always marshal.
	b, _ := json.Marshal(map[string]any{
		"type":                 "object",
		"properties":           props,
		"required":             required,
		"additionalProperties": false,
	})
	return b
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
