package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	gh "github.com/google/go-github/v60/github"
	"github.com/palantir/go-githubapp/githubapp"
	"github.com/rs/zerolog"

	"github.com/mergeguard/mergeguard/server/store"
)

// installationHandler keeps installations and their repositories in step
// with GitHub.
//
// A change is applied before its delivery is recorded: the changes are
// idempotent, so a failure in between is repaired by GitHub's redelivery,
// while a recorded delivery whose change was lost could never be.
type installationHandler struct {
	store Store
}

var _ githubapp.EventHandler = (*installationHandler)(nil)

func (h *installationHandler) Handles() []string {
	return []string{"installation", "installation_repositories"}
}

func (h *installationHandler) Handle(ctx context.Context, eventType, deliveryID string, payload []byte) error {
	var (
		inst   *gh.Installation
		action string
		apply  func(ctx context.Context) error
	)
	switch eventType {
	case "installation":
		var event gh.InstallationEvent
		if err := json.Unmarshal(payload, &event); err != nil {
			return recordMalformed(ctx, h.store, eventType, deliveryID, err)
		}
		inst, action = event.GetInstallation(), event.GetAction()
		apply = h.installation(&event)
	case "installation_repositories":
		var event gh.InstallationRepositoriesEvent
		if err := json.Unmarshal(payload, &event); err != nil {
			return recordMalformed(ctx, h.store, eventType, deliveryID, err)
		}
		inst, action = event.GetInstallation(), event.GetAction()
		apply = h.repositories(&event)
	}
	log := zerolog.Ctx(ctx).With().Int64(githubapp.LogKeyInstallationID, inst.GetID()).Logger()
	ctx = log.WithContext(ctx)

	if seen, err := redelivered(ctx, h.store, &log, deliveryID); err != nil || seen {
		return err
	}
	d := store.Delivery{ID: deliveryID, Event: eventType, Action: action, InstallationID: inst.GetID()}
	if apply == nil {
		d.Outcome, d.Detail = outcomeIgnored, "action "+action+" changes nothing MergeGuard keeps"
	} else {
		if err := apply(ctx); err != nil {
			return err
		}
		d.Outcome = outcomeApplied
	}
	res, err := h.store.RecordDelivery(ctx, d, nil)
	if err != nil {
		return err
	}
	logRecorded(ctx, &log, d, res, "installation "+action)
	return nil
}

// installation returns the change an installation event makes, nil when it
// makes none.
func (h *installationHandler) installation(event *gh.InstallationEvent) func(context.Context) error {
	inst := event.GetInstallation()
	switch event.GetAction() {
	case "created", "new_permissions_accepted", "unsuspend":
		return func(ctx context.Context) error {
			if err := h.upsert(ctx, inst, event.Repositories); err != nil {
				return err
			}
			if event.GetAction() == "unsuspend" {
				return h.store.SetInstallationSuspended(ctx, inst.GetID(), false)
			}
			return nil
		}
	case "suspend":
		return func(ctx context.Context) error {
			if err := h.upsert(ctx, inst, event.Repositories); err != nil {
				return err
			}
			return h.store.SetInstallationSuspended(ctx, inst.GetID(), true)
		}
	case "deleted":
		return func(ctx context.Context) error {
			err := h.store.DeleteInstallation(ctx, inst.GetID())
			if errors.Is(err, store.ErrNotFound) {
				return nil // never recorded: nothing to delete
			}
			return err
		}
	}
	return nil
}

// repositories returns the change an installation_repositories event
// makes, nil when it makes none.
func (h *installationHandler) repositories(event *gh.InstallationRepositoriesEvent) func(context.Context) error {
	inst := event.GetInstallation()
	switch event.GetAction() {
	case "added":
		return func(ctx context.Context) error { return h.upsert(ctx, inst, event.RepositoriesAdded) }
	case "removed":
		return func(ctx context.Context) error {
			// Upsert first: the installation may predate MergeGuard's records.
			if err := h.upsert(ctx, inst, nil); err != nil {
				return err
			}
			ids := make([]int64, 0, len(event.RepositoriesRemoved))
			for _, r := range event.RepositoriesRemoved {
				ids = append(ids, r.GetID())
			}
			return h.store.RemoveRepositories(ctx, inst.GetID(), ids)
		}
	}
	return nil
}

// upsert records an installation and the given repositories of it.
func (h *installationHandler) upsert(ctx context.Context, inst *gh.Installation, repos []*gh.Repository) error {
	err := h.store.UpsertInstallation(ctx, store.Installation{
		ID:           inst.GetID(),
		AccountLogin: inst.GetAccount().GetLogin(),
		AccountType:  inst.GetAccount().GetType(),
	})
	if err != nil {
		return err
	}
	if len(repos) == 0 {
		return nil
	}
	rs := make([]store.Repository, 0, len(repos))
	for _, r := range repos {
		if r.GetID() == 0 || r.GetFullName() == "" {
			return fmt.Errorf("installation %d: repository without id or full name", inst.GetID())
		}
		rs = append(rs, store.Repository{ID: r.GetID(), FullName: r.GetFullName(), Private: r.GetPrivate()})
	}
	return h.store.UpsertRepositories(ctx, inst.GetID(), rs)
}
