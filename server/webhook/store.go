package webhook

import (
	"context"
	"errors"

	"github.com/rs/zerolog"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/server/store"
)

// Store is what intake needs from the database; *store.Store implements it.
type Store interface {
	// RecordDelivery records a delivery once and, when it is new, queues
	// run in the same transaction.
	RecordDelivery(ctx context.Context, d store.Delivery, run *store.NewRun) (store.DeliveryResult, error)
	// DeliverySeen reports whether a delivery is already recorded.
	DeliverySeen(ctx context.Context, id string) (bool, error)
	// ClosePullRequest records a pull_request closed delivery, stops the
	// pull request's runs and gives its findings their outcome, in one
	// transaction.
	ClosePullRequest(ctx context.Context, d store.Delivery, c store.Closing) (store.ClosedResult, error)
	// RecordCommand records a comment command's delivery and carries the
	// command out — or not, over a rate limit or when a review of the head
	// is already queued or running — in one transaction.
	RecordCommand(ctx context.Context, d store.Delivery, c store.Command) (store.CommandResult, error)
	// ApplyThread records a review thread resolved or unresolved on the
	// ledger entry of its first comment, and reports whether the entry's
	// state changed.
	ApplyThread(ctx context.Context, repo string, number int, t review.ThreadChange) (changed bool, err error)
	// FindingOfThread returns the ledger entry posted as review comment
	// commentID, a thread's first comment, of pull request number;
	// store.ErrNotFound when the comment is not one of MergeGuard's
	// findings.
	FindingOfThread(ctx context.Context, repo string, number int, commentID int64) (review.LedgerEntry, error)
	UpsertInstallation(ctx context.Context, in store.Installation) error
	SetInstallationSuspended(ctx context.Context, id int64, suspended bool) error
	DeleteInstallation(ctx context.Context, id int64) error
	UpsertRepositories(ctx context.Context, installationID int64, repos []store.Repository) error
	RemoveRepositories(ctx context.Context, installationID int64, ids []int64) error
	// RenameRepository gives the learnings of the old names of GitHub's
	// repository id id its new name.
	RenameRepository(ctx context.Context, id int64, name string) (learnings int64, err error)
}

var _ Store = (*store.Store)(nil)

// Recorder records deliveries as Store.RecordDelivery does; *store.Intake
// (group commit: one transaction for concurrent deliveries) implements it.
type Recorder interface {
	RecordDelivery(ctx context.Context, d store.Delivery, run *store.NewRun) (store.DeliveryResult, error)
}

// recordingStore is a Store whose RecordDelivery is a Recorder's.
type recordingStore struct {
	Store
	rec Recorder
}

func (s recordingStore) RecordDelivery(ctx context.Context, d store.Delivery, run *store.NewRun) (store.DeliveryResult, error) {
	return s.rec.RecordDelivery(ctx, d, run)
}

// Delivery outcomes set by intake (the store sets queued and deduplicated).
const (
	outcomeIgnored   = "ignored"
	outcomeMalformed = "malformed"
	outcomeApplied   = "applied"
	outcomeReplied   = "replied"
)

// recordMalformed records a delivery whose payload cannot be decoded (when it
// has an id to record it under) and returns the error that answers 400.
func recordMalformed(ctx context.Context, s Store, event, deliveryID string, err error) error {
	bad := decodeError(event, err)
	if deliveryID == "" {
		return bad
	}
	_, recErr := s.RecordDelivery(ctx, store.Delivery{
		ID: deliveryID, Event: event, Outcome: outcomeMalformed, Detail: bad.Error(),
	}, nil)
	return errors.Join(bad, recErr)
}

// redelivered reports whether a delivery is already recorded, for changes
// made before the delivery is recorded: a redelivery must change nothing.
func redelivered(ctx context.Context, s Store, log *zerolog.Logger, id string) (bool, error) {
	seen, err := s.DeliverySeen(ctx, id)
	if seen {
		setOutcome(ctx, "duplicate")
		log.Info().Msg("redelivery of a recorded delivery; nothing to do")
	}
	return seen, err
}
