package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/mergeguard/mergeguard/github"
	"github.com/mergeguard/mergeguard/github/hook"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/text"
	"github.com/mergeguard/mergeguard/server/store"
)

// commandTimeout bounds the GitHub calls a comment command makes while
// GitHub waits for the webhook's answer (it gives up after 10 seconds).
const commandTimeout = 5 * time.Second

// GitHub is what comment commands need from GitHub, through the
// installation's client. NewGitHub returns the real one.
type GitHub interface {
	// CanWrite reports whether user may push to repo (owner/name): write,
	// maintain or admin permission.
	CanWrite(ctx context.Context, installationID int64, repo, user string) (bool, error)
	// Head returns the current head of a pull request of repo.
	Head(ctx context.Context, installationID int64, repo string, number int) (review.PullHead, error)
	// React adds a reaction ("eyes", "+1", ...) to an issue comment.
	React(ctx context.Context, installationID int64, repo string, commentID int64, reaction string) error
	// Comment posts a comment on an issue or pull request.
	Comment(ctx context.Context, installationID int64, repo string, number int, body string) error
	// ReplyToReviewComment answers review comment commentID, the first
	// comment of its thread, of pull request number in that thread.
	ReplyToReviewComment(ctx context.Context, installationID int64, repo string, number int, commentID int64, body string) error
	// ResolveThread resolves a review thread (its GraphQL node id).
	ResolveThread(ctx context.Context, installationID int64, repo, threadID string) error
}

// issueCommentHandler runs /mergeguard commands written on pull requests.
//
// The commenter's permission is checked here, in the request, with a short
// timeout: a command is a person's action, rare next to pushes, and deciding
// at intake means a reader's command leaves no run behind and a writer's
// rerun is acknowledged at once. A rerun also reads the pull request's head
// here (the payload carries none), so that its run is queued for a head
// like every other pull request run: it waits behind a running review of
// that head instead of cancelling it, and supersedes one of an older head.
// When GitHub cannot answer in time the delivery is not recorded and the
// handler answers 500, so a redelivery runs the command.
type issueCommentHandler struct {
	decode      hook.Decoder[hook.IssueCommentEvent]
	store       Store
	github      GitHub
	maxAttempts int
}

func (h *issueCommentHandler) Handles() []string { return []string{"issue_comment"} }

func (h *issueCommentHandler) Handle(ctx context.Context, eventType, deliveryID string, payload []byte) error {
	var event hook.IssueCommentEvent
	if err := h.decode.Decode(payload, &event); err != nil {
		return recordMalformed(ctx, h.store, eventType, deliveryID, err)
	}
	installationID := event.Installation.ID
	number := event.Issue.Number
	ctx, log := prContext(ctx, installationID, event.Repository, number)
	d := store.Delivery{
		ID:             deliveryID,
		Event:          eventType,
		Action:         event.Action,
		InstallationID: installationID,
		Repository:     event.Repository.FullName,
		RepositoryID:   event.Repository.ID,
		PRNumber:       number,
	}
	cmd, why := command(&event)
	if why == "" && installationID == 0 {
		why = noInstallation
	}
	if why != "" {
		return ignore(ctx, h.store, &log, d, why)
	}

	if seen, err := redelivered(ctx, h.store, &log, deliveryID); err != nil || seen {
		return err
	}
	user := event.Comment.User.Login
	log = log.With().Str("command", cmd.Name).Str("user", user).Logger()
	ctx = log.WithContext(ctx)
	cctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()

	allowed, err := canWrite(cctx, h.github, d, user)
	if err != nil {
		return err
	}
	if !allowed {
		return ignore(ctx, h.store, &log, d, user+" has no write permission")
	}
	closed := event.Issue.State == "closed"
	return h.run(cctx, &log, d, cmd, event.Comment.ID, number, user, closed)
}

// command returns the /mergeguard command of a comment, or why the comment
// is not one to act on.
func command(event *hook.IssueCommentEvent) (hook.Command, string) {
	c := event.Comment
	switch {
	case event.Action != "created":
		return hook.Command{}, "comment " + event.Action
	case event.Issue.PullRequest == nil:
		return hook.Command{}, "comment on an issue, not a pull request"
	case c.User.IsBot():
		return hook.Command{}, "comment by bot " + c.User.Login
	}
	cmd, ok := hook.ParseCommand(c.Body)
	if !ok {
		return hook.Command{}, "not a /mergeguard command"
	}
	return cmd, ""
}

// ack is how a command is acknowledged on GitHub: a reaction to the
// comment and a reply, each optional.
type ack struct{ reaction, reply string }

// Replies to commands that do nothing.
const (
	closedReply   = "This pull request is closed: MergeGuard reviews open pull requests only."
	coalescedText = "A review of head `%s` is already %s; this command adds nothing."
	upgradedText  = "A review of head `%s` is already queued; it will now be a full review."
	describesText = "A review of head `%s` is already queued; it will now also write its walkthrough into this pull request's description."
	limitText     = "Too many MergeGuard commands %s: at most %d every %d minutes. " +
		"This command and the next ones are ignored until the oldest is %d minutes old."
)

// run carries out a permitted command, written by user in comment commentID
// on pull request number (closed when the payload says so), records the
// delivery with what it did — or that it was over a rate limit — in one
// transaction, then acknowledges the command on GitHub.
// The acknowledgement is best effort: the command is already recorded, so a
// failure to react or reply is logged, not returned.
func (h *issueCommentHandler) run(ctx context.Context, log *zerolog.Logger, d store.Delivery, cmd hook.Command, commentID int64, number int, user string, closed bool) error {
	c, a, err := h.plan(ctx, &d, cmd, commentID, user, closed)
	if err != nil {
		return err
	}
	res, err := h.store.RecordCommand(ctx, d, c)
	if err != nil {
		return err
	}
	a = recorded(ctx, log, d, res, a)
	if a.reaction != "" {
		if err := h.github.React(ctx, d.InstallationID, d.Repository, commentID, a.reaction); err != nil {
			log.Warn().Err(err).Str("reaction", a.reaction).Msg("acknowledge the command")
		}
	}
	if a.reply != "" {
		if err := h.github.Comment(ctx, d.InstallationID, d.Repository, number, a.reply); err != nil {
			log.Warn().Err(err).Msg("reply to the command")
		}
	}
	return nil
}

// plan returns what a command, written in comment commentID on pull
// request d.PRNumber, asks of the store and how to acknowledge it when it
// is carried out, and sets d's outcome for a command that queues nothing.
// A review reads the pull request's head from GitHub: the payload carries
// none. An answer does not: its worker reads the head it answers at.
func (h *issueCommentHandler) plan(ctx context.Context, d *store.Delivery, cmd hook.Command, commentID int64, user string, closed bool) (store.Command, ack, error) {
	number := d.PRNumber
	c := store.Command{Name: cmd.Name, User: user, PRNumber: number}
	d.Sender, d.Command = user, cmd.Name
	switch cmd.Name {
	case hook.CommandAsk:
		if cmd.Text == "" {
			d.Outcome, d.Detail = outcomeReplied, "ask without a question"
			return c, ack{reaction: github.ReactionOK, reply: askUsage}, nil
		}
		q := review.Question{Kind: review.QuestionAsk, CommentID: commentID, Author: user, Writer: true, Body: cmd.Text}
		c.Run = answerRun(d, number, "", store.TriggerCommand, q, h.maxAttempts)
		return c, ack{reaction: github.ReactionSeen}, nil
	case hook.CommandIgnore, hook.CommandLearn:
		d.Outcome, d.Detail = outcomeReplied, cmd.Name+" outside a review thread"
		return c, ack{reaction: github.ReactionOK, reply: fmt.Sprintf(threadOnlyText, cmd.Name)}, nil
	case hook.CommandRerun, hook.CommandReview, hook.CommandFullReview, hook.CommandDescribe:
		// describe is a review run that also writes the description: the
		// worker takes the walkthrough of a succeeded review of the head
		// when there is one, and reviews first otherwise.
		if closed {
			d.Outcome, d.Detail = outcomeReplied, "pull request closed; nothing to review"
			return c, ack{reply: closedReply}, nil
		}
		head, err := h.github.Head(ctx, d.InstallationID, d.Repository, number)
		if err != nil {
			return c, ack{}, fmt.Errorf("read the head of %s#%d: %w", d.Repository, number, err)
		}
		opts := review.Options{Full: cmd.Full, Describe: cmd.Name == hook.CommandDescribe}
		c.Run = requestedRun(d, number, head, user, opts, h.maxAttempts)
		return c, ack{reaction: github.ReactionSeen}, nil
	case hook.CommandPause, hook.CommandResume:
		paused := cmd.Name == hook.CommandPause
		c.Pause = &paused
		d.Outcome, d.Detail = outcomeApplied, cmd.Name+" by "+user
		reply := "Automatic reviews of this pull request are resumed."
		if paused {
			reply = "Automatic reviews of this pull request are paused; `/mergeguard resume` restarts them, `/mergeguard rerun` still reviews on request."
		}
		return c, ack{reaction: github.ReactionOK, reply: reply}, nil
	default:
		d.Outcome, d.Detail = outcomeReplied, "help for "+cmd.Name
		return c, ack{reaction: github.ReactionOK, reply: hook.HelpText}, nil
	}
}

// requestedRun is the run a person asks for, by a command or the check's
// Re-run button: a review of pull request number of d.Repository at head,
// with the flags of opts (a full review, a description).
func requestedRun(d *store.Delivery, number int, head review.PullHead, user string, opts review.Options, maxAttempts int) *store.NewRun {
	r := &store.NewRun{
		Mode:           store.ModePR,
		Trigger:        store.TriggerCommand,
		InstallationID: d.InstallationID,
		Repository:     d.Repository,
		RepositoryID:   d.RepositoryID,
		PRNumber:       number,
		HeadSHA:        head.SHA,
		BaseSHA:        head.BaseSHA,
		Branch:         head.Branch,
		RequestedBy:    user,
		MaxAttempts:    maxAttempts,
	}
	if opts.Full || opts.Describe {
		// The options of a run that must be a full review, never an
		// incremental one (review.Options.Full), or that writes the
		// description (Describe); they always marshal.
		r.Options, _ = json.Marshal(review.Options{Full: opts.Full, Describe: opts.Describe})
	}
	return r
}

// recorded logs what RecordCommand did with a command, sets the delivery's
// outcome for the deliveries metric, and returns how to acknowledge it: a
// redelivery and a command over a limit already answered get nothing.
func recorded(ctx context.Context, log *zerolog.Logger, d store.Delivery, res store.CommandResult, a ack) ack {
	switch {
	case res.Duplicate:
		setOutcome(ctx, "duplicate")
		log.Info().Msg("redelivery of a recorded delivery; nothing to do")
		return ack{}
	case res.Limited:
		setOutcome(ctx, store.OutcomeRateLimited)
		log.Warn().Str("limit", string(res.Limit)).Bool("answered", res.Notify).Msg("command over the rate limit; ignored")
		if !res.Notify {
			return ack{}
		}
		return ack{reply: limitReply(res.Limit, d.Sender)}
	case res.Coalesced:
		setOutcome(ctx, store.OutcomeCoalesced)
		log.Info().Str("run_id", res.Run.ID).Bool("upgraded", res.Upgraded).Msg("a review of the head is already " + string(res.Run.Status))
		a.reply = fmt.Sprintf(coalescedText, text.ShortSHA(res.Run.HeadSHA), res.Run.Status)
		if res.Upgraded {
			a.reply = fmt.Sprintf(upgradedText, text.ShortSHA(res.Run.HeadSHA))
			if d.Command == hook.CommandDescribe {
				a.reply = fmt.Sprintf(describesText, text.ShortSHA(res.Run.HeadSHA))
			}
		}
		return a
	case res.Run != nil:
		setOutcome(ctx, "enqueued")
		if res.Run.Mode == store.ModeAnswer {
			log.Info().Str("run_id", res.Run.ID).Msg("queued an answer")
			return a
		}
		log.Info().Str("run_id", res.Run.ID).Msg("queued a review of head " + res.Run.HeadSHA)
		return a
	}
	setOutcome(ctx, d.Outcome)
	log.Info().Msg(d.Detail)
	return a
}

// limitReply is the one answer to commands over a rate limit.
func limitReply(limit store.Limit, user string) string {
	minutes := int(store.CommandWindow.Minutes())
	if limit == store.LimitUser {
		return fmt.Sprintf(limitText, "from @"+user, store.MaxCommandsPerUser, minutes, minutes)
	}
	return fmt.Sprintf(limitText, "on this pull request", store.MaxCommandsPerPR, minutes, minutes)
}

// canWrite asks GitHub whether user may write to the repository of d: the
// permission every command and piece of feedback needs.
func canWrite(ctx context.Context, gh GitHub, d store.Delivery, user string) (bool, error) {
	ok, err := gh.CanWrite(ctx, d.InstallationID, d.Repository, user)
	if err != nil {
		return false, fmt.Errorf("check the permission of %s on %s: %w", user, d.Repository, err)
	}
	return ok, nil
}
