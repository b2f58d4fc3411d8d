package review

import "time"

// Kinds of question.
const (
	// QuestionReply is a reply in a review thread MergeGuard is in.
	QuestionReply = "reply"
	// QuestionAsk is /mergeguard ask, in the pull request's conversation
	// or on a line comment.
	QuestionAsk = "ask"
)

// Question is what a person asked MergeGuard on a pull request: the
// options of an answer run. Body is untrusted, whoever wrote it.
type Question struct {
	Kind string `json:"kind"`
	// CommentID is the comment that asks: a review comment (a reply, or
	// ask on a line) or an issue comment (ask in the conversation).
	CommentID int64 `json:"comment_id"`
	// ThreadCommentID is the first comment of the review thread the
	// question is in; 0 in the conversation.
	ThreadCommentID int64 `json:"thread_comment_id,omitempty"`
	// Path and Line are the lines the question is about (a review
	// comment's); empty for the whole pull request.
	Path string `json:"path,omitempty"`
	Line int    `json:"line,omitempty"`
	// Author asked; Writer says they have write access (checked through
	// GitHub when the question arrived). Only a writer's feedback dismisses
	// a finding or proposes a learning.
	Author string `json:"author"`
	Writer bool   `json:"writer"`
	Body   string `json:"body"`
}

// Classification is how a reply in a finding's thread reads.
type Classification string

// Classifications of a reply.
const (
	ClassAgree          Classification = "agree"           // the finding is right
	ClassDisagree       Classification = "disagree"        // the finding is wrong or the code is intended
	ClassQuestion       Classification = "question"        // asks something
	ClassFixedElsewhere Classification = "fixed-elsewhere" // handled in another place or change
)

// Dismisses reports whether a writer's reply so classified dismisses the
// thread's finding.
func (c Classification) Dismisses() bool { return c == ClassDisagree || c == ClassFixedElsewhere }

// LearningStatus is where a learning stands.
type LearningStatus string

// Learning statuses.
const (
	LearningProposed LearningStatus = "proposed" // waits for a writer's /mergeguard learn
	LearningActive   LearningStatus = "active"   // goes into every later review
	LearningInactive LearningStatus = "inactive" // kept, not used
)

// Learning is an instruction people taught MergeGuard about a repository,
// with where it came from. It is MergeGuard's one learning type, from the
// store to the pipeline, the API and the web UI.
type Learning struct {
	ID          int64  `json:"id"`
	Repository  string `json:"repository"`
	Instruction string `json:"instruction"`
	// Path is a doublestar glob of the files it applies to; "" for all.
	Path   string         `json:"path,omitempty"`
	Status LearningStatus `json:"status"`
	// Provenance: the pull request and thread (its first comment), the
	// finding, the writer whose feedback it came from, the answer run.
	PRNumber        int       `json:"pr_number,omitempty"`
	ThreadCommentID int64     `json:"thread_comment_id,omitempty"`
	Fingerprint     string    `json:"fingerprint,omitempty"`
	Author          string    `json:"author"`
	RunID           string    `json:"run_id,omitempty"`
	CreatedAt       time.Time `json:"created_at"`
	UpdatedAt       time.Time `json:"updated_at"`
	UpdatedBy       string    `json:"updated_by,omitempty"`
}

// ThreadMessage is one comment of a review thread, oldest first.
type ThreadMessage struct {
	Author string `json:"author"`
	// Bot is set for comments of MergeGuard's own bot account.
	Bot  bool   `json:"bot,omitempty"`
	Body string `json:"body"`
}

// Reaction is a person's reaction to a comment: "+1", "-1", ...
type Reaction struct {
	Login   string `json:"login"`
	Content string `json:"content"`
}
