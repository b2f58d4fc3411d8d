package webhook

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/rs/zerolog"

	"github.com/mergeguard/mergeguard/github/hook"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/server/store"
)

// reviewCommentHandler handles review comments written on pull requests
// (pull_request_review_comment created): questions to MergeGuard, which
// it queues as answer runs, and the /mergeguard commands of its review
// threads.
//
// A comment is a question to MergeGuard when it replies in one of
// MergeGuard's threads (its in_reply_to_id is the comment of a finding on
// the pull request's ledger), mentions the App, or is /mergeguard ask.
// Anyone's question is answered; the run records whether its author has
// write access, since only a writer's feedback may dismiss a finding or
// propose a learning. /mergeguard commands are writers' only, as in the
// conversation: /mergeguard ignore in a MergeGuard thread dismisses its
// finding and resolves the thread, /mergeguard learn activates the
// learning proposed in it.
//
// As for comment commands, the permission is asked in the request, and
// the delivery is recorded with what it does (the run queued, the finding
// dismissed, the learning activated) in one transaction, under the
// command rate limits (store.RecordCommand): a redelivery does nothing
// again, and a flood of replies queues at most store.MaxCommandsPerPR
// answers per pull request in store.CommandWindow.
type reviewCommentHandler struct {
	decode      hook.Decoder[hook.PullRequestReviewCommentEvent]
	store       Store
	github      GitHub
	app         app
	maxAttempts int
}

// commandReply names a question that is not a command (a reply in
// MergeGuard's thread, a mention) in the delivery record, where it counts
// towards the command rate limits.
const commandReply = "reply"

// Replies in review threads (and in the conversation, for the first
// two). A reply in a thread is rendered as untrusted text (no markdown),
// so these are plain text.
const (
	askUsage         = "Write the question after the command, for example: /mergeguard ask why is this a bug?"
	threadOnlyText   = "/mergeguard %s works in a MergeGuard review thread: reply with it to the comment of the finding."
	conversationText = "/mergeguard %s works in the pull request's conversation, not in a review thread."
	unknownText      = "Unknown command; /mergeguard help in the pull request's conversation lists the commands."
	dismissedText    = "Dismissed: MergeGuard will not raise this finding again on this pull request, and it no longer counts in the verdict."
	notOpenText      = "Nothing to dismiss: this finding is no longer open on this pull request."
	learnedText      = "Learning #%d is now active: later reviews of this repository follow it%s: \u201c%s\u201d"
	noLearningText   = "MergeGuard proposed no learning in this thread; there is nothing to activate."
)

func (h *reviewCommentHandler) Handles() []string { return []string{"pull_request_review_comment"} }

func (h *reviewCommentHandler) Handle(ctx context.Context, eventType, deliveryID string, payload []byte) error {
	var event hook.PullRequestReviewCommentEvent
	if err := h.decode.Decode(payload, &event); err != nil {
		return recordMalformed(ctx, h.store, eventType, deliveryID, err)
	}
	number := event.PullRequest.Number
	ctx, log := prContext(ctx, event.Installation.ID, event.Repository, number)
	user := event.Comment.User.Login
	d := store.Delivery{
		ID:             deliveryID,
		Event:          eventType,
		Action:         event.Action,
		InstallationID: event.Installation.ID,
		Repository:     event.Repository.FullName,
		RepositoryID:   event.Repository.ID,
		PRNumber:       number,
		Sender:         user,
	}
	if why := h.ignored(&event); why != "" {
		return ignore(ctx, h.store, &log, d, why)
	}
	if seen, err := redelivered(ctx, h.store, &log, deliveryID); err != nil || seen {
		return err
	}
	rc, why, err := h.read(ctx, &event)
	if err != nil {
		return err
	}
	if why != "" {
		return ignore(ctx, h.store, &log, d, why)
	}
	log = log.With().Str("user", user).Int64("comment", event.Comment.ID).Logger()
	ctx = log.WithContext(ctx)
	cctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	writer, err := canWrite(cctx, h.github, d, user)
	if err != nil {
		return err
	}
	if rc.isCmd && !writer {
		return ignore(ctx, h.store, &log, d, user+" has no write permission")
	}
	c, a := h.plan(&d, &event, rc, writer)
	res, err := h.store.RecordCommand(cctx, d, c)
	if err != nil {
		return err
	}
	h.acknowledge(cctx, &log, d, rc, acknowledgement(ctx, &log, d, c, res, a))
	return nil
}

// ignored returns why a review comment delivery asks nothing of
// MergeGuard whatever it says, "" when it may.
func (h *reviewCommentHandler) ignored(event *hook.PullRequestReviewCommentEvent) string {
	c := event.Comment
	switch {
	case event.Action != "created":
		return "review comment " + event.Action
	case event.Installation.ID == 0:
		return noInstallation
	case event.PullRequest.Number == 0 || event.Repository.FullName == "" || c.ID == 0:
		return "no pull request or comment"
	case h.app.isBot(c.User.Login) || h.app.isBot(event.Sender.Login):
		return "comment by MergeGuard itself"
	case c.User.IsBot():
		return "comment by bot " + c.User.Login
	case event.Sender.IsBot():
		return "comment by bot " + event.Sender.Login
	}
	return ""
}

// threadComment is what a review comment is to MergeGuard.
type threadComment struct {
	// thread is the first comment of the comment's thread: the one it
	// replies to, or itself when it starts a thread.
	thread int64
	// finding is the ledger entry of MergeGuard's thread the comment
	// replies in; nil when it is in no thread of MergeGuard's.
	finding *review.LedgerEntry
	// cmd is the comment's /mergeguard command when isCmd.
	cmd   hook.Command
	isCmd bool
}

// read returns what a review comment is to MergeGuard, or why it is not
// addressed to it: not in its thread, no mention, no command.
func (h *reviewCommentHandler) read(ctx context.Context, event *hook.PullRequestReviewCommentEvent) (threadComment, string, error) {
	c := event.Comment
	tc := threadComment{thread: cmp.Or(c.InReplyToID, c.ID)}
	tc.cmd, tc.isCmd = hook.ParseCommand(c.Body)
	if c.InReplyToID != 0 {
		e, err := h.store.FindingOfThread(ctx, event.Repository.FullName, event.PullRequest.Number, c.InReplyToID)
		switch {
		case err == nil:
			tc.finding = &e
		case !errors.Is(err, store.ErrNotFound):
			return tc, "", err
		}
	}
	if !tc.isCmd && tc.finding == nil && !hook.Mentions(c.Body, h.app.login) {
		return tc, "not addressed to MergeGuard: not in its thread, no mention of it, no command", nil
	}
	return tc, "", nil
}

// threadAck is how a review comment is answered in its thread: a reply,
// and whether to resolve the thread of the finding; each optional.
type threadAck struct {
	reply   string
	resolve bool
}

// plan returns what a review comment, by a writer or not, asks of the
// store and how to answer it when it is carried out, and sets d's outcome
// for a comment that queues nothing. Only a writer's comment may be a
// command (Handle ignores a reader's).
func (h *reviewCommentHandler) plan(d *store.Delivery, event *hook.PullRequestReviewCommentEvent, tc threadComment, writer bool) (store.Command, threadAck) {
	comment := event.Comment
	c := store.Command{Name: tc.cmd.Name, User: comment.User.Login, PRNumber: event.PullRequest.Number}
	q := review.Question{Kind: review.QuestionReply, CommentID: comment.ID, ThreadCommentID: tc.thread,
		Path: comment.Path, Line: comment.Line, Author: comment.User.Login, Writer: writer, Body: comment.Body}
	head := event.PullRequest.Head.SHA
	if !tc.isCmd {
		c.Name = commandReply
		c.Run = answerRun(d, c.PRNumber, head, store.TriggerWebhook, q, h.maxAttempts)
		return c, threadAck{}
	}
	switch tc.cmd.Name {
	case hook.CommandAsk:
		if tc.cmd.Text == "" {
			d.Outcome, d.Detail = outcomeReplied, "ask without a question"
			return c, threadAck{reply: askUsage}
		}
		q.Kind, q.Body = review.QuestionAsk, tc.cmd.Text
		c.Run = answerRun(d, c.PRNumber, head, store.TriggerCommand, q, h.maxAttempts)
		return c, threadAck{}
	case hook.CommandIgnore, hook.CommandLearn:
		if tc.finding == nil {
			d.Outcome, d.Detail = outcomeReplied, tc.cmd.Name+" outside a MergeGuard thread"
			return c, threadAck{reply: fmt.Sprintf(threadOnlyText, tc.cmd.Name)}
		}
		d.Outcome, d.Detail = outcomeApplied, tc.cmd.Name+" by "+c.User+" in the thread of finding "+tc.finding.Finding.Fingerprint
		if tc.cmd.Name == hook.CommandIgnore {
			c.Dismiss = &store.Dismissal{Fingerprint: tc.finding.Finding.Fingerprint, How: review.DismissedCommand}
		} else {
			c.LearnThread = tc.thread
		}
		return c, threadAck{}
	case hook.CommandUnknown:
		d.Outcome, d.Detail = outcomeReplied, "unknown command in a review thread"
		return c, threadAck{reply: unknownText}
	default:
		d.Outcome, d.Detail = outcomeReplied, tc.cmd.Name+" in a review thread"
		return c, threadAck{reply: fmt.Sprintf(conversationText, tc.cmd.Name)}
	}
}

// acknowledgement logs what RecordCommand did with a review comment, sets
// the delivery's outcome for the deliveries metric, and returns how to
// answer it: planned, or what a dismissal or learning came to; nothing
// for a redelivery, the one answer to comments over a rate limit.
func acknowledgement(ctx context.Context, log *zerolog.Logger, d store.Delivery, c store.Command, res store.CommandResult, planned threadAck) threadAck {
	a := recorded(ctx, log, d, res, ack{reply: planned.reply})
	switch {
	case res.Duplicate || res.Limited:
		return threadAck{reply: a.reply}
	case c.Dismiss != nil && res.Dismissed:
		return threadAck{reply: dismissedText, resolve: true}
	case c.Dismiss != nil:
		return threadAck{reply: notOpenText}
	case c.LearnThread != 0 && res.Learning != nil:
		return threadAck{reply: learnedReply(*res.Learning)}
	case c.LearnThread != 0:
		return threadAck{reply: noLearningText}
	}
	return planned
}

// learnedReply names a learning just activated.
func learnedReply(l review.Learning) string {
	files := ""
	if l.Path != "" {
		files = " in the files " + l.Path
	}
	return fmt.Sprintf(learnedText, l.ID, files, strings.Join(strings.Fields(l.Instruction), " "))
}

// acknowledge answers a review comment in its thread: it resolves the
// thread of the finding it dismissed (when the ledger knows the thread's
// node id), then replies. Both are best effort: the comment is already
// recorded, so a failure is logged, not returned.
func (h *reviewCommentHandler) acknowledge(ctx context.Context, log *zerolog.Logger, d store.Delivery, tc threadComment, a threadAck) {
	if a.resolve && tc.finding != nil {
		if id := tc.finding.ThreadID; id == "" {
			log.Info().Msg("the finding's thread id is unknown; the thread is left unresolved")
		} else if err := h.github.ResolveThread(ctx, d.InstallationID, d.Repository, id); err != nil {
			log.Warn().Err(err).Str("thread", id).Msg("resolve the dismissed finding's thread")
		}
	}
	if a.reply != "" {
		if err := h.github.ReplyToReviewComment(ctx, d.InstallationID, d.Repository, d.PRNumber, tc.thread, a.reply); err != nil {
			log.Warn().Err(err).Msg("reply in the review thread")
		}
	}
}

// answerRun is the run that answers q on pull request number of
// d.Repository, asked at head ("" when the delivery does not say: the
// worker reads the pull request's head).
func answerRun(d *store.Delivery, number int, head string, trigger store.Trigger, q review.Question, maxAttempts int) *store.NewRun {
	r := &store.NewRun{
		Mode:           store.ModeAnswer,
		Trigger:        trigger,
		InstallationID: d.InstallationID,
		Repository:     d.Repository,
		RepositoryID:   d.RepositoryID,
		PRNumber:       number,
		HeadSHA:        head,
		RequestedBy:    q.Author,
		MaxAttempts:    maxAttempts,
	}
	// A Question always marshals.
	r.Options, _ = json.Marshal(q)
	return r
}
