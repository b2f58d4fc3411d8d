package webhook

import (
	"context"

	"github.com/mergeguard/mergeguard/github/hook"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/server/store"
)

// reviewThreadHandler records what people do to MergeGuard's review
// threads: resolving one dismisses its finding on the pull request's
// ledger, unresolving it reopens the finding (store.ApplyThread).
//
// Only a person with write access counts: a pull request's author without
// it must not dismiss a blocking finding by resolving its thread. The
// permission is asked here, in the request, as for comment commands; when
// GitHub cannot answer the delivery is not recorded and answered 500, so
// that GitHub's redelivery applies it. The change is applied before the
// delivery is recorded (it is idempotent, as the installation handler's
// are); a redelivery of a recorded delivery changes nothing.
//
// A dismissal queues no run: the finding no longer counts from the next
// review of the pull request on (a push, a command or the check's Re-run),
// which reads the ledger.
type reviewThreadHandler struct {
	decode hook.Decoder[hook.PullRequestReviewThreadEvent]
	store  Store
	github GitHub
	app    app
}

func (h *reviewThreadHandler) Handles() []string { return []string{"pull_request_review_thread"} }

func (h *reviewThreadHandler) Handle(ctx context.Context, eventType, deliveryID string, payload []byte) error {
	var event hook.PullRequestReviewThreadEvent
	if err := h.decode.Decode(payload, &event); err != nil {
		return recordMalformed(ctx, h.store, eventType, deliveryID, err)
	}
	number := event.PullRequest.Number
	ctx, log := prContext(ctx, event.Installation.ID, event.Repository, number)
	sender := event.Sender.Login
	d := store.Delivery{
		ID:             deliveryID,
		Event:          eventType,
		Action:         event.Action,
		InstallationID: event.Installation.ID,
		Repository:     event.Repository.FullName,
		RepositoryID:   event.Repository.ID,
		PRNumber:       number,
		Sender:         sender,
	}
	if why := h.ignored(&event); why != "" {
		return ignore(ctx, h.store, &log, d, why)
	}
	if seen, err := redelivered(ctx, h.store, &log, deliveryID); err != nil || seen {
		return err
	}
	log = log.With().Str("user", sender).Str("thread", event.Thread.NodeID).Logger()
	ctx = log.WithContext(ctx)
	cctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	allowed, err := canWrite(cctx, h.github, d, sender)
	if err != nil {
		return err
	}
	if !allowed {
		return ignore(ctx, h.store, &log, d, sender+" has no write permission")
	}
	change := review.ThreadChange{
		ThreadID:  event.Thread.NodeID,
		CommentID: event.Thread.Comments[0].ID,
		Resolved:  event.Action == "resolved",
		By:        sender,
	}
	changed, err := h.store.ApplyThread(ctx, d.Repository, number, change)
	if err != nil {
		return err
	}
	d.Outcome, d.Detail = threadOutcome(change.Resolved, changed)
	res, err := h.store.RecordDelivery(ctx, d, nil)
	if err != nil {
		return err
	}
	logRecorded(ctx, &log, d, res, d.Detail)
	return nil
}

// ignored returns why a thread delivery changes nothing, "" when it may:
// a person resolved or unresolved one of MergeGuard's threads.
func (h *reviewThreadHandler) ignored(event *hook.PullRequestReviewThreadEvent) string {
	comments := event.Thread.Comments
	switch {
	case event.Action != "resolved" && event.Action != "unresolved":
		return "thread " + event.Action
	case event.Installation.ID == 0:
		return noInstallation
	case event.PullRequest.Number == 0 || event.Repository.FullName == "":
		return "no pull request"
	case !h.app.known():
		return "the App's bot login is unknown, so its threads cannot be told"
	case len(comments) == 0 || !h.app.isBot(comments[0].User.Login):
		return "not MergeGuard's thread"
	case h.app.isBot(event.Sender.Login):
		return "" + event.Action + " by MergeGuard itself"
	case event.Sender.IsBot():
		return "" + event.Action + " by bot " + event.Sender.Login
	}
	return ""
}

// threadOutcome is the outcome and detail of a thread resolved or
// unresolved by a writer, by whether its finding's state changed.
func threadOutcome(resolved, changed bool) (outcome, detail string) {
	switch {
	case resolved && changed:
		return outcomeApplied, "thread resolved: finding dismissed"
	case resolved:
		return outcomeIgnored, "thread resolved: no open finding of it on the ledger"
	case changed:
		return outcomeApplied, "thread unresolved: finding open again"
	}
	return outcomeIgnored, "thread unresolved: no finding of it dismissed by resolving its thread"
}
