package review

// Placement says where a posted review put a finding: MergeGuard's one
// placement type, from the publisher to the store.
type Placement struct {
	// Where is PlacedInline, PlacedBody, PlacedFile or PlacedDuplicate.
	Where string
	// CommentID is the GitHub review comment of an inline or file comment
	// (for PlacedDuplicate, the earlier one); 0 in the body.
	CommentID int64
}

// Where a finding was placed.
const (
	PlacedInline    = "inline"    // an inline comment of the review
	PlacedBody      = "body"      // listed in the review body
	PlacedFile      = "file"      // a file-level comment
	PlacedDuplicate = "duplicate" // already commented on by an earlier review
)
