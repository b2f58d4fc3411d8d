package webhook

import (
	"context"
	"errors"
	"fmt"

	"github.com/rs/zerolog"

	"github.com/mergeguard/mergeguard/github"
	"github.com/mergeguard/mergeguard/github/hook"
	"github.com/mergeguard/mergeguard/server/store"
)

// installationHandler keeps installations and their repositories in step
// with GitHub.
//
// A change is applied before its delivery is recorded: the changes are
// idempotent, so a failure in between is repaired by GitHub's redelivery,
// while a recorded delivery whose change was lost could never be.
type installationHandler struct {
	decodeInstallation hook.Decoder[hook.InstallationEvent]
	decodeRepositories hook.Decoder[hook.InstallationRepositoriesEvent]
	store              Store
}

func (h *installationHandler) Handles() []string {
	return []string{"installation", "installation_repositories"}
}

func (h *installationHandler) Handle(ctx context.Context, eventType, deliveryID string, payload []byte) error {
	var (
		inst   hook.Installation
		action string
		apply  func(ctx context.Context) error
	)
	switch eventType {
	case "installation":
		var event hook.InstallationEvent
		if err := h.decodeInstallation.Decode(payload, &event); err != nil {
			return recordMalformed(ctx, h.store, eventType, deliveryID, err)
		}
		inst, action = event.Installation, event.Action
		apply = h.installation(&event)
	case "installation_repositories":
		var event hook.InstallationRepositoriesEvent
		if err := h.decodeRepositories.Decode(payload, &event); err != nil {
			return recordMalformed(ctx, h.store, eventType, deliveryID, err)
		}
		inst, action = event.Installation, event.Action
		apply = h.repositories(&event)
	}
	log := zerolog.Ctx(ctx).With().Int64(github.LogKeyInstallationID, inst.ID).Logger()
	ctx = log.WithContext(ctx)

	if seen, err := redelivered(ctx, h.store, &log, deliveryID); err != nil || seen {
		return err
	}
	d := store.Delivery{ID: deliveryID, Event: eventType, Action: action, InstallationID: inst.ID}
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
func (h *installationHandler) installation(event *hook.InstallationEvent) func(context.Context) error {
	inst := event.Installation
	switch event.Action {
	case "created", "new_permissions_accepted", "unsuspend":
		return func(ctx context.Context) error {
			if err := h.upsert(ctx, inst, event.Repositories); err != nil {
				return err
			}
			if event.Action == "unsuspend" {
				return h.store.SetInstallationSuspended(ctx, inst.ID, false)
			}
			return nil
		}
	case "suspend":
		return func(ctx context.Context) error {
			if err := h.upsert(ctx, inst, event.Repositories); err != nil {
				return err
			}
			return h.store.SetInstallationSuspended(ctx, inst.ID, true)
		}
	case "deleted":
		return func(ctx context.Context) error {
			err := h.store.DeleteInstallation(ctx, inst.ID)
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
func (h *installationHandler) repositories(event *hook.InstallationRepositoriesEvent) func(context.Context) error {
	inst := event.Installation
	switch event.Action {
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
				ids = append(ids, r.ID)
			}
			return h.store.RemoveRepositories(ctx, inst.ID, ids)
		}
	}
	return nil
}

// upsert records an installation and the given repositories of it.
func (h *installationHandler) upsert(ctx context.Context, inst hook.Installation, repos []hook.Repository) error {
	err := h.store.UpsertInstallation(ctx, store.Installation{
		ID:           inst.ID,
		AccountLogin: inst.Account.Login,
		AccountType:  inst.Account.Type,
	})
	if err != nil {
		return err
	}
	if len(repos) == 0 {
		return nil
	}
	rs := make([]store.Repository, 0, len(repos))
	for _, r := range repos {
		if r.ID == 0 || r.FullName == "" {
			return fmt.Errorf("installation %d: repository without id or full name", inst.ID)
		}
		rs = append(rs, store.Repository{ID: r.ID, FullName: r.FullName, Private: r.Private})
	}
	return h.store.UpsertRepositories(ctx, inst.ID, rs)
}
