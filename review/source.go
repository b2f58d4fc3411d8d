package review

import (
	"context"
	"errors"
	"time"
)

// ErrNotFound is returned by a Source when a file, line or object does not
// exist. Tools answer it to the model as a readable message.
var ErrNotFound = errors.New("not found")

// ErrUnsupported is returned by a Source that cannot answer a question, such
// as blame from a bare diff.
var ErrUnsupported = errors.New("not supported by this source")

// Revision selects the side of the change a file is read from.
type Revision string

// Revisions.
const (
	Head Revision = "head"
	Base Revision = "base"
)

// Change describes the change under review.
type Change struct {
	// Repository is "owner/name" for GitHub, a directory name for local
	// reviews, empty for a bare diff.
	Repository string
	Number     int // pull request number; 0 when not a PR
	URL        string
	Title      string
	Body       string
	Author     string
	AuthorBot  bool
	Draft      bool
	Labels     []string
	BaseRef    string
	HeadRef    string
	BaseSHA    string
	HeadSHA    string
}

// ChangedFile is one file of the change, as the host lists it.
type ChangedFile struct {
	Path      string `json:"path"`
	OldPath   string `json:"old_path,omitempty"`
	Status    string `json:"status"` // added, modified, removed, renamed, copied, changed
	Additions int    `json:"additions"`
	Deletions int    `json:"deletions"`
	// PatchMissing is set when the host omitted the file's patch (binary or
	// too large): its content is unknown, not unchanged.
	PatchMissing bool `json:"patch_missing,omitempty"`
}

// Commit is one commit of the change.
type Commit struct {
	SHA     string    `json:"sha"`
	Author  string    `json:"author"`
	Date    time.Time `json:"date"`
	Message string    `json:"message"`
}

// BlameLine tells who last changed a line.
type BlameLine struct {
	Author    string    `json:"author"`
	Date      time.Time `json:"date"`
	CommitSHA string    `json:"commit_sha"`
	Message   string    `json:"message"`
}

// Source is where a review reads the change from. There are three: the
// GitHub API (the App), a local git repository (the CLI) and a bare diff text
// (the API's diff_text). Implementations must be safe for concurrent use and
// should cache what they fetch for the life of one review.
//
// Paths are repository-relative, slash-separated and already checked by the
// caller to stay inside the repository.
type Source interface {
	// Change returns the metadata of the change.
	Change(ctx context.Context) (Change, error)
	// Diff returns the unified diff of base..head, git style.
	Diff(ctx context.Context) (string, error)
	// Files lists the changed files.
	Files(ctx context.Context) ([]ChangedFile, error)
	// Commits lists up to max commits of the change, oldest first.
	Commits(ctx context.Context, max int) ([]Commit, error)
	// ReadFile returns a file's content at the base or head revision, or
	// ErrNotFound.
	ReadFile(ctx context.Context, path string, rev Revision) ([]byte, error)
	// Blame tells who last changed a line at the head revision.
	Blame(ctx context.Context, path string, line int) (BlameLine, error)
	// ListFiles lists every file path of the repository at the head revision.
	ListFiles(ctx context.Context) ([]string, error)
}
