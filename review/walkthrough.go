package review

// Walkthrough is a short account of a change for its reader: what it does
// and its changed files grouped by purpose, one line each. It is built
// from the diff alone, or by one model call when a model is configured
// (Source says which); the model's words are untrusted text.
type Walkthrough struct {
	// Summary says in a few sentences what the change does.
	Summary string `json:"summary"`
	// Groups are the changed files by purpose, each file once.
	Groups []WalkthroughGroup `json:"groups"`
	// Source is "diff" (built from the diff alone) or "model".
	Source string `json:"source"`
}

// Walkthrough sources.
const (
	WalkthroughFromDiff  = "diff"
	WalkthroughFromModel = "model"
)

// WalkthroughGroup is a set of changed files with one purpose, such as
// "source", "tests" or "docs" (or a model's name for it).
type WalkthroughGroup struct {
	Name  string            `json:"name"`
	Files []WalkthroughFile `json:"files"`
}

// WalkthroughFile is one changed file of a walkthrough.
type WalkthroughFile struct {
	FilePath string `json:"file_path"`
	// OldPath is the path before a rename or copy; "" otherwise.
	OldPath    string `json:"old_path,omitempty"`
	ChangeType string `json:"change_type"`
	Language   string `json:"language,omitempty"`
	Additions  int    `json:"additions"`
	Deletions  int    `json:"deletions"`
	Binary     bool   `json:"binary,omitempty"`
	// Line is the file's one line: what the change does to it.
	Line string `json:"line"`
}
