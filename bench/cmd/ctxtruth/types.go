package main

// The truth file's JSON; review/eval's ContextTruth reads it (kept apart
// so that bench/ does not build the whole review pipeline for this
// program).

// truthFile is the truth of one commit.
type truthFile struct {
	Repo        string       `json:"repo"`
	Commit      string       `json:"commit"`
	Definitions []definition `json:"definitions"`
	Callers     []caller     `json:"callers"`
	Notes       []string     `json:"notes,omitempty"`
}

// definition is a declaration of the module a changed line uses.
type definition struct {
	Name string `json:"name"`
	Kind string `json:"kind"` // func, method, type, const or var
	Path string `json:"path"`
	Line int    `json:"line"`
}

// caller is a reference to a changed function.
type caller struct {
	Of   string `json:"of"` // pkgpath.Func or pkgpath.(Recv).Meth
	Path string `json:"path"`
	Line int    `json:"line"`
	Call bool   `json:"call"` // the function of a call expression
}
