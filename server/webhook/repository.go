package webhook

import (
	"context"
	"fmt"
	"strings"

	"github.com/mergeguard/mergeguard/github/hook"
	"github.com/mergeguard/mergeguard/server/store"
)

// repositoryHandler follows a repository renamed or transferred on GitHub:
// the learnings kept under its old name take the new one
// (store.RenameRepository), so that its next reviews apply them. Its runs
// and finding ledgers keep the name they were made under. Visibility never
// depends on the name (it is asked by repository id), so a delivery that
// is missed, late or forged by someone holding the webhook secret changes
// only which learnings a review applies, not who may see what. The change
// is applied before the delivery is recorded; it is idempotent, so a
// redelivery changes nothing.
type repositoryHandler struct {
	decode hook.Decoder[hook.RepositoryEvent]
	store  Store
}

func (h *repositoryHandler) Handles() []string { return []string{"repository"} }

func (h *repositoryHandler) Handle(ctx context.Context, eventType, deliveryID string, payload []byte) error {
	var event hook.RepositoryEvent
	if err := h.decode.Decode(payload, &event); err != nil {
		return recordMalformed(ctx, h.store, eventType, deliveryID, err)
	}
	repo := event.Repository
	ctx, log := prContext(ctx, event.Installation.ID, repo, 0)
	d := store.Delivery{ID: deliveryID, Event: eventType, Action: event.Action, InstallationID: event.Installation.ID,
		Repository: repo.FullName, RepositoryID: repo.ID}
	switch {
	case event.Action != "renamed" && event.Action != "transferred":
		return ignore(ctx, h.store, &log, d, "action "+event.Action+" changes nothing MergeGuard keeps")
	case repo.ID <= 0 || !validFullName(repo.FullName):
		return ignore(ctx, h.store, &log, d, "the repository has no id or no owner/name")
	}
	if seen, err := redelivered(ctx, h.store, &log, deliveryID); err != nil || seen {
		return err
	}
	learnings, err := h.store.RenameRepository(ctx, repo.ID, repo.FullName)
	if err != nil {
		return err
	}
	d.Outcome, d.Detail = outcomeApplied, fmt.Sprintf("%d learnings now under %s", learnings, repo.FullName)
	res, err := h.store.RecordDelivery(ctx, d, nil)
	if err != nil {
		return err
	}
	logRecorded(ctx, &log, d, res, "repository "+event.Action)
	return nil
}

// validFullName reports whether name is owner/name, each part non-empty,
// bounded as GitHub bounds them (39 and 100 characters).
func validFullName(name string) bool {
	owner, repo, ok := strings.Cut(name, "/")
	return ok && owner != "" && repo != "" && len(owner) <= 39 && len(repo) <= 100 && !strings.Contains(repo, "/")
}
