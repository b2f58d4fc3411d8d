package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/mergeguard/mergeguard/github"
	"github.com/mergeguard/mergeguard/review"
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
	store       Store
	github      GitHub
	maxAttempts int
}

func (h *issueCommentHandler) Handles() []string { return []string{"issue_comment"} }

func (h *issueCommentHandler) Handle(ctx context.Context, eventType, deliveryID string, payload []byte) error {
	var event github.IssueCommentEvent
	if err := json.Unmarshal(payload, &event); err != nil {
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

	allowed, err := h.github.CanWrite(cctx, installationID, d.Repository, user)
	if err != nil {
		return fmt.Errorf("check the permission of %s on %s: %w", user, d.Repository, err)
	}
	if !allowed {
		return ignore(ctx, h.store, &log, d, user+" has no write permission")
	}
	return h.run(cctx, &log, d, cmd, event.Comment.ID, number, user)
}

// command returns the /mergeguard command of a comment, or why the comment
// is not one to act on.
func command(event *github.IssueCommentEvent) (github.Command, string) {
	c := event.Comment
	switch {
	case event.Action != "created":
		return github.Command{}, "comment " + event.Action
	case event.Issue.PullRequest == nil:
		return github.Command{}, "comment on an issue, not a pull request"
	case c.User.IsBot():
		return github.Command{}, "comment by bot " + c.User.Login
	}
	cmd, ok := github.ParseCommand(c.Body)
	if !ok {
		return github.Command{}, "not a /mergeguard command"
	}
	return cmd, ""
}

// run carries out a permitted command, written by user in comment commentID
// on pull request number, records the delivery with what it did, then
// acknowledges the command on GitHub.
// The acknowledgement is best effort: the command is already recorded, so a
// failure to react or reply is logged, not returned.
func (h *issueCommentHandler) run(ctx context.Context, log *zerolog.Logger, d store.Delivery, cmd github.Command, commentID int64, number int, user string) error {
	var (
		run             *store.NewRun // the run the command queues, if any
		what            string        // what the log says was done
		reaction, reply string
	)
	switch cmd.Name {
	case github.CommandRerun, github.CommandReview:
		head, err := h.github.Head(ctx, d.InstallationID, d.Repository, number)
		if err != nil {
			return fmt.Errorf("read the head of %s#%d: %w", d.Repository, number, err)
		}
		run = &store.NewRun{
			Mode:           store.ModePR,
			Trigger:        store.TriggerCommand,
			InstallationID: d.InstallationID,
			Repository:     d.Repository,
			PRNumber:       number,
			HeadSHA:        head.SHA,
			BaseSHA:        head.BaseSHA,
			Branch:         head.Branch,
			RequestedBy:    user,
			MaxAttempts:    h.maxAttempts,
		}
		what = "queued a review of head " + head.SHA + " requested by " + user
		reaction = github.ReactionSeen
	case github.CommandPause, github.CommandResume:
		paused := cmd.Name == github.CommandPause
		if err := h.store.SetPaused(ctx, d.Repository, number, paused, user); err != nil {
			return err
		}
		d.Outcome, d.Detail = outcomeApplied, cmd.Name+" by "+user
		what = d.Detail
		reaction = github.ReactionOK
		reply = "Automatic reviews of this pull request are resumed."
		if paused {
			reply = "Automatic reviews of this pull request are paused; `/mergeguard resume` restarts them, `/mergeguard rerun` still reviews on request."
		}
	default:
		d.Outcome, d.Detail = outcomeReplied, "help for "+cmd.Name
		what = d.Detail
		reaction, reply = github.ReactionOK, github.HelpText
	}
	res, err := h.store.RecordDelivery(ctx, d, run)
	if err != nil {
		return err
	}
	logRecorded(ctx, log, d, res, what)
	if res.Duplicate {
		return nil
	}
	if err := h.github.React(ctx, d.InstallationID, d.Repository, commentID, reaction); err != nil {
		log.Warn().Err(err).Str("reaction", reaction).Msg("acknowledge the command")
	}
	if reply != "" {
		if err := h.github.Comment(ctx, d.InstallationID, d.Repository, number, reply); err != nil {
			log.Warn().Err(err).Msg("reply to the command")
		}
	}
	return nil
}
