package webhook

import (
	"context"
	"fmt"
	"strconv"

	"github.com/rs/zerolog"

	"github.com/mergeguard/mergeguard/github"
	"github.com/mergeguard/mergeguard/github/hook"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/server/store"
)

// checkRunHandler reviews a head again when someone presses the Re-run
// button of MergeGuard's check run (check_run rerequested): for each open
// pull request whose head is the check's head, it queues the review a
// /mergeguard rerun would, through the same store path (RecordCommand:
// coalescing with a queued or running review of the head, and the command
// rate limits). Every other check_run delivery, MergeGuard's own check
// runs being created and completed included, is recorded as ignored.
//
// GitHub lets only people with write access press Re-run; the permission
// is asked anyway, as for commands. When the check's head is the head of
// several pull requests, the first is recorded under the delivery's id and
// each further one under "<id>#<number>", so that a redelivery finds each
// recorded.
type checkRunHandler struct {
	decode      hook.Decoder[hook.CheckRunEvent]
	store       Store
	github      GitHub
	app         app
	maxAttempts int
}

func (h *checkRunHandler) Handles() []string { return []string{"check_run"} }

// checkPull is a pull request a check run's head is the head of.
type checkPull struct {
	number int
	head   review.PullHead
}

func (h *checkRunHandler) Handle(ctx context.Context, eventType, deliveryID string, payload []byte) error {
	var event hook.CheckRunEvent
	if err := h.decode.Decode(payload, &event); err != nil {
		return recordMalformed(ctx, h.store, eventType, deliveryID, err)
	}
	ctx, log := prContext(ctx, event.Installation.ID, event.Repository, 0)
	sender := event.Sender.Login
	d := store.Delivery{
		ID:             deliveryID,
		Event:          eventType,
		Action:         event.Action,
		InstallationID: event.Installation.ID,
		Repository:     event.Repository.FullName,
		RepositoryID:   event.Repository.ID,
		HeadSHA:        event.CheckRun.HeadSHA,
		Sender:         sender,
	}
	pulls, why := h.pulls(&event)
	if why != "" {
		return ignore(ctx, h.store, &log, d, why)
	}
	if seen, err := redelivered(ctx, h.store, &log, deliveryID); err != nil || seen {
		return err
	}
	log = log.With().Str("user", sender).Int64("check_run_id", event.CheckRun.ID).Logger()
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
	// The delivery's own id is recorded last: when a pull request fails,
	// GitHub's redelivery is not taken for a recorded one and queues what
	// is missing.
	for i := len(pulls) - 1; i >= 0; i-- {
		pd := d
		if i > 0 {
			pd.ID = deliveryID + "#" + strconv.Itoa(pulls[i].number)
		}
		if err := h.rerun(cctx, pd, pulls[i], sender); err != nil {
			return err
		}
	}
	return nil
}

// rerun queues the review of pull request p that the Re-run button asks
// for, recorded as the delivery d. Over a rate limit, the first time, it
// says so on the pull request (best effort); nothing else is posted.
func (h *checkRunHandler) rerun(ctx context.Context, d store.Delivery, p checkPull, user string) error {
	d.PRNumber = p.number
	log := zerolog.Ctx(ctx).With().Int(github.LogKeyPRNum, p.number).Logger()
	c := store.Command{Name: hook.CommandRerun, User: user, PRNumber: p.number,
		Run: requestedRun(&d, p.number, p.head, user, review.Options{}, h.maxAttempts)}
	res, err := h.store.RecordCommand(ctx, d, c)
	if err != nil {
		return err
	}
	a := recorded(ctx, &log, d, res, ack{})
	if res.Limited && a.reply != "" {
		if err := h.github.Comment(ctx, d.InstallationID, d.Repository, p.number, a.reply); err != nil {
			log.Warn().Err(err).Msg("say that the Re-run is over the rate limit")
		}
	}
	return nil
}

// pulls returns the pull requests a check_run delivery asks to review
// again, or why it asks for nothing.
func (h *checkRunHandler) pulls(event *hook.CheckRunEvent) ([]checkPull, string) {
	cr := event.CheckRun
	switch {
	case event.Action != "rerequested":
		return nil, "check run " + event.Action
	case event.Installation.ID == 0:
		return nil, noInstallation
	case event.Repository.FullName == "":
		return nil, "no repository"
	case !h.app.known():
		return nil, "the App's bot login is unknown, so its check runs cannot be told"
	case cr.Name != github.CheckName || !h.app.owns(cr.App.ID, cr.App.Slug):
		return nil, fmt.Sprintf("check run %q of %s is not MergeGuard's", cr.Name, appName(cr.App.ID, cr.App.Slug))
	case event.Sender.IsBot():
		return nil, "rerequested by bot " + event.Sender.Login
	case len(cr.PullRequests) == 0:
		return nil, "check run of head " + cr.HeadSHA + " names no pull request (a push from a fork, or none open)"
	}
	var pulls []checkPull
	for _, pr := range cr.PullRequests {
		if pr.Head.SHA != cr.HeadSHA || pr.Number <= 0 {
			continue
		}
		pulls = append(pulls, checkPull{number: pr.Number,
			head: review.PullHead{SHA: cr.HeadSHA, BaseSHA: pr.Base.SHA, Branch: pr.Head.Ref}})
	}
	if len(pulls) == 0 {
		return nil, "no open pull request is at head " + cr.HeadSHA + " any more"
	}
	return pulls, ""
}
