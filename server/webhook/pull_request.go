package webhook

import (
	"context"
	"encoding/json"

	gh "github.com/google/go-github/v60/github"
	"github.com/palantir/go-githubapp/githubapp"
	"github.com/rs/zerolog"

	"github.com/mergeguard/mergeguard/server/store"
)

// pullRequestHandler queues a review for each new head of a pull request and
// stops the reviews of a closed one.
type pullRequestHandler struct {
	store       Store
	maxAttempts int
}

var _ githubapp.EventHandler = (*pullRequestHandler)(nil)

func (h *pullRequestHandler) Handles() []string { return []string{"pull_request"} }

// pullRequestEvent is the part of a pull_request payload intake reads.
// Pushes are the bulk of the deliveries; decoding only these fields skips
// the hundreds go-github's PullRequestEvent would allocate.
type pullRequestEvent struct {
	Action      string `json:"action"`
	Number      int    `json:"number"`
	PullRequest struct {
		Head struct {
			SHA string `json:"sha"`
			Ref string `json:"ref"`
		} `json:"head"`
		Base struct {
			SHA string `json:"sha"`
		} `json:"base"`
	} `json:"pull_request"`
	Repository   repository `json:"repository"`
	Installation struct {
		ID int64 `json:"id"`
	} `json:"installation"`
}

// repository is the part of a payload's repository intake reads.
type repository struct {
	Name     string `json:"name"`
	FullName string `json:"full_name"`
	Owner    struct {
		Login string `json:"login"`
	} `json:"owner"`
}

// gh returns the repository as go-githubapp's log helpers take it.
func (r repository) gh() *gh.Repository {
	return &gh.Repository{Name: &r.Name, FullName: &r.FullName, Owner: &gh.User{Login: &r.Owner.Login}}
}

func (h *pullRequestHandler) Handle(ctx context.Context, eventType, deliveryID string, payload []byte) error {
	var event pullRequestEvent
	if err := json.Unmarshal(payload, &event); err != nil {
		return recordMalformed(ctx, h.store, eventType, deliveryID, err)
	}
	pr := event.PullRequest
	installationID := event.Installation.ID
	ctx, log := githubapp.PreparePRContext(ctx, installationID, event.Repository.gh(), event.Number)
	d := store.Delivery{
		ID:             deliveryID,
		Event:          eventType,
		Action:         event.Action,
		InstallationID: installationID,
		Repository:     event.Repository.FullName,
		PRNumber:       event.Number,
	}
	switch event.Action {
	case "opened", "reopened", "synchronize", "ready_for_review":
		if installationID == 0 {
			return ignore(ctx, h.store, &log, d, noInstallation)
		}
		run := &store.NewRun{
			Mode:           store.ModePR,
			Trigger:        store.TriggerWebhook,
			InstallationID: installationID,
			Repository:     d.Repository,
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
		d.Outcome = store.OutcomeClosed
		res, err := h.store.ClosePullRequest(ctx, d, event.Number)
		if err != nil {
			return err
		}
		logRecorded(ctx, &log, d, res, "pull request closed; its runs are stopped")
	default:
		return ignore(ctx, h.store, &log, d, "action "+event.Action+" does not ask for a review")
	}
	return nil
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
