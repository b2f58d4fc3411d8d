package review

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
)

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
	// ID is the review comment's id.
	ID     int64  `json:"id"`
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

// Limits of a learning (the learnings table enforces them too).
const (
	MaxLearningInstruction = 500 // characters
	MaxLearningPath        = 200 // characters
)

// Clean returns l with its instruction and path trimmed of surrounding
// space and its line ends made "\n" (a browser's form sends "\r\n").
func (l Learning) Clean() Learning {
	l.Instruction = strings.TrimSpace(strings.ReplaceAll(l.Instruction, "\r\n", "\n"))
	l.Path = strings.TrimSpace(l.Path)
	return l
}

// Validate reports what makes l unfit to store: an instruction that is
// empty once trimmed, longer than MaxLearningInstruction characters or
// holds control characters other than newline and tab (or bidirectional
// formatting characters, which hide text); a path that is not empty and
// not a valid doublestar glob relative to the repository (no leading "/",
// no ".." segment); an unknown status.
func (l Learning) Validate() error {
	var errs []error
	in := strings.TrimSpace(l.Instruction)
	switch n := utf8.RuneCountInString(in); {
	case !utf8.ValidString(in):
		errs = append(errs, errors.New("instruction is not valid UTF-8"))
	case n == 0:
		errs = append(errs, errors.New("instruction is empty"))
	case n > MaxLearningInstruction:
		errs = append(errs, fmt.Errorf("instruction has %d characters, more than %d", n, MaxLearningInstruction))
	}
	if r, ok := forbiddenRune(in); ok {
		errs = append(errs, fmt.Errorf("instruction holds the control character %U", r))
	}
	if err := validateLearningPath(l.Path); err != nil {
		errs = append(errs, err)
	}
	switch l.Status {
	case LearningProposed, LearningActive, LearningInactive:
	default:
		errs = append(errs, fmt.Errorf("status %q is not proposed, active or inactive", l.Status))
	}
	return errors.Join(errs...)
}

// forbiddenRune returns the first control character of s other than
// newline and tab, or bidirectional formatting character.
func forbiddenRune(s string) (rune, bool) {
	for _, r := range s {
		if r == '\n' || r == '\t' {
			continue
		}
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
			return r, true
		}
	}
	return 0, false
}

func validateLearningPath(p string) error {
	switch {
	case p == "":
		return nil
	case utf8.RuneCountInString(p) > MaxLearningPath:
		return fmt.Errorf("path is longer than %d characters", MaxLearningPath)
	case p != strings.TrimSpace(p):
		return fmt.Errorf("path %q has surrounding space", p)
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("path %q starts with \"/\": globs are relative to the repository", p)
	case !doublestar.ValidatePattern(p):
		return fmt.Errorf("path %q is not a valid glob", p)
	}
	for _, r := range p {
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
			return fmt.Errorf("path %q holds the control character %U", p, r)
		}
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return fmt.Errorf("path %q has a \"..\" segment", p)
		}
	}
	return nil
}

// Applies reports whether l applies to file: it has no path, or its path
// matches the file.
func (l Learning) Applies(file string) bool {
	return l.Path == "" || doublestar.MatchUnvalidated(l.Path, file)
}

// unrelatedPaths are files of no repository in particular: a glob that
// matches all of them matches every file, as far as a learning goes.
var unrelatedPaths = [...]string{"a", "Makefile", "README.md", ".env", "x/y/z.txt",
	".github/workflows/ci.yml", "src/main.go", "deep/nested/dir/module.py", "web/app.test.tsx"}

// MatchesEverything reports whether l applies to every file: it has no
// path, or its glob matches each of a set of unrelated paths (`**`, `*/**`,
// `{**,x}`, ...).
func (l Learning) MatchesEverything() bool {
	for _, p := range unrelatedPaths {
		if !l.Applies(p) {
			return false
		}
	}
	return true
}

// ScopedTo returns l with its path narrowed to exactly file when it does
// not apply to file or applies to every file: a learning drawn from one
// finding covers that finding's file at most, until a writer widens it.
func (l Learning) ScopedTo(file string) Learning {
	if l.Applies(file) && !l.MatchesEverything() {
		return l
	}
	l.Path = globEscaper.Replace(file)
	return l
}

// globEscaper escapes the characters doublestar gives a meaning to.
var globEscaper = strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`, `]`, `\]`, `{`, `\{`, `}`, `\}`)

// InOwnWords reports whether instruction is what text says, word for word
// (case, punctuation and spacing aside): a learning a writer stated
// themselves rather than one a model wrote from their reply.
func InOwnWords(instruction, text string) bool {
	in := words(instruction)
	return in != "" && strings.Contains(words(text), in)
}

// words is s's letters and digits in lower case, a space between words.
func words(s string) string {
	f := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
	return strings.Join(f, " ")
}
