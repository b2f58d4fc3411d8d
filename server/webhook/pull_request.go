package webhook

import (
	"context"
	"fmt"

	"github.com/rs/zerolog"

	"github.com/mergeguard/mergeguard/github"
	"github.com/mergeguard/mergeguard/github/hook"
	"github.com/mergeguard/mergeguard/server/metrics"
	"github.com/mergeguard/mergeguard/server/store"
)

// pullRequestHandler queues a review for each new head of a pull request
// and for each new title (the title decides ignore_title_keywords: the gate
// is evaluated again), and stops the reviews of a closed one and gives its
// findings their outcome. An edit of
// the description alone asks for nothing.
type pullRequestHandler struct {
	decode      hook.Decoder[hook.PullRequestEvent]
	store       Store
	metrics     *metrics.Metrics
	maxAttempts int
}

func (h *pullRequestHandler) Handles() []string { return []string{"pull_request"} }

func (h *pullRequestHandler) Handle(ctx context.Context, eventType, deliveryID string, payload []byte) error {
	var event hook.PullRequestEvent
	if err := h.decode.Decode(payload, &event); err != nil {
		return recordMalformed(ctx, h.store, eventType, deliveryID, err)
	}
	pr := event.PullRequest
	installationID := event.Installation.ID
	ctx, log := prContext(ctx, installationID, event.Repository, event.Number)
	d := store.Delivery{
		ID:             deliveryID,
		Event:          eventType,
		Action:         event.Action,
		InstallationID: installationID,
		Repository:     event.Repository.FullName,
		RepositoryID:   event.Repository.ID,
		PRNumber:       event.Number,
	}
	action := event.Action
	if action == "edited" && event.Changes.Title != nil {
		action = "title edited"
	}
	switch action {
	case "opened", "reopened", "synchronize", "ready_for_review", "title edited":
		if installationID == 0 {
			return ignore(ctx, h.store, &log, d, noInstallation)
		}
		run := &store.NewRun{
			Mode:           store.ModePR,
			Trigger:        store.TriggerWebhook,
			InstallationID: installationID,
			Repository:     d.Repository,
			RepositoryID:   d.RepositoryID,
			PRNumber:       event.Number,
			HeadSHA:        pr.Head.SHA,
			BaseSHA:        pr.Base.SHA,
			Branch:         pr.Head.Ref,
			MaxAttempts:    h.maxAttempts,
		}
		res, err := h.store.RecordDelivery(ctx, d, run)
		if err != nil {
			return err
		}
		logRecorded(ctx, &log, d, res, "queued a review of head "+run.HeadSHA)
	case "closed":
		return h.close(ctx, &log, d, event)
	default:
		return ignore(ctx, h.store, &log, d, "action "+event.Action+" does not ask for a review")
	}
	return nil
}

// close records a pull request's closing: its runs stopped, its findings'
// outcomes set (each counted for the metrics) in the delivery's
// transaction.
func (h *pullRequestHandler) close(ctx context.Context, log *zerolog.Logger, d store.Delivery, event hook.PullRequestEvent) error {
	d.Outcome = store.OutcomeClosed
	c := store.Closing{Number: event.Number, Merged: event.PullRequest.Merged}
	if at := event.PullRequest.ClosedAt; at != nil {
		c.At = *at
	}
	res, err := h.store.ClosePullRequest(ctx, d, c)
	if err != nil {
		return err
	}
	for _, o := range res.Outcomes {
		h.metrics.FindingOutcome(string(o.Outcome), string(o.Severity), string(o.Category), o.Source)
	}
	logRecorded(ctx, log, d, res.DeliveryResult, fmt.Sprintf("pull request closed (merged: %t); its runs are stopped, %d findings given their outcome",
		c.Merged, len(res.Outcomes)))
	return nil
}

// prContext adds the installation, repository and pull request to ctx's
// logger, with go-githubapp's keys, and returns both.
func prContext(ctx context.Context, installationID int64, repo hook.Repository, number int) (context.Context, zerolog.Logger) {
	lc := zerolog.Ctx(ctx).With()
	if installationID != 0 {
		lc = lc.Int64(github.LogKeyInstallationID, installationID)
	}
	if repo.Owner.Login != "" {
		lc = lc.Str(github.LogKeyRepositoryOwner, repo.Owner.Login).Str(github.LogKeyRepositoryName, repo.Name)
	}
	if number != 0 {
		lc = lc.Int(github.LogKeyPRNum, number)
	}
	log := lc.Logger()
	return log.WithContext(ctx), log
}

// noInstallation is why a delivery without an installation is ignored: it
// comes from a repository webhook, not the App, and nothing could be read
// or posted for it.
const noInstallation = "delivery without an installation (not from the GitHub App)"

// ignore records a delivery that asks for nothing, saying why.
func ignore(ctx context.Context, s Store, log *zerolog.Logger, d store.Delivery, why string) error {
	d.Outcome, d.Detail = outcomeIgnored, why
	res, err := s.RecordDelivery(ctx, d, nil)
	if err != nil {
		return err
	}
	logRecorded(ctx, log, d, res, why)
	return nil
}

// logRecorded logs what intake did with a delivery and sets its outcome
// for the deliveries metric.
func logRecorded(ctx context.Context, log *zerolog.Logger, d store.Delivery, res store.DeliveryResult, what string) {
	switch {
	case res.Duplicate:
		setOutcome(ctx, "duplicate")
		log.Info().Msg("redelivery of a recorded delivery; nothing to do")
		return
	case res.ReplayOf != "":
		setOutcome(ctx, store.OutcomeDuplicate)
		log.Warn().Str("replay_of", res.ReplayOf).Msg("the same event as an earlier delivery, under a new delivery id; nothing queued")
		return
	case res.Run != nil && res.Reused:
		setOutcome(ctx, store.OutcomeDeduplicated)
	case res.Run != nil:
		setOutcome(ctx, "enqueued")
	default:
		setOutcome(ctx, d.Outcome)
	}
	e := log.Info()
	if res.Run != nil {
		e = e.Str("run_id", res.Run.ID).Bool("deduplicated", res.Reused)
	}
	e.Msg(what)
}
