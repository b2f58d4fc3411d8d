package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/mergeguard/mergeguard/review"
)

// Command is a comment command on a pull request, recorded with its
// delivery by RecordCommand.
type Command struct {
	// Name is the command as parsed ("rerun", "pause", ...).
	Name string
	// User is the login of who wrote it.
	User string
	// PRNumber is the pull request of d.Repository it was written on.
	PRNumber int
	// Run is the review the command asks for, if any. It is not queued when
	// a review of its head is queued, or running on request (coalesced).
	Run *NewRun
	// Pause, when set, is the pull request's automatic-review switch to
	// set (pause: true, resume: false).
	Pause *bool
	// Dismiss, when set, is the finding of the pull request's ledger the
	// command dismisses (/mergeguard ignore in its thread), by User.
	Dismiss *Dismissal
	// LearnThread, when not 0, is the first comment of the review thread
	// whose proposed learning the command activates (/mergeguard learn),
	// by User.
	LearnThread int64
}

// Dismissal is a ledger finding a command dismisses.
type Dismissal struct {
	Fingerprint string
	// How is review.DismissedCommand or review.DismissedFeedback.
	How string
}

// CommandResult is what RecordCommand did.
type CommandResult struct {
	// Duplicate is true when the delivery was already recorded: nothing
	// else happened.
	Duplicate bool
	// Limited is true when the command was over a rate limit: recorded
	// OutcomeRateLimited, nothing else done. Notify is true for the first
	// such command in the window, the one to answer; Limit says which
	// limit.
	Limited bool
	Notify  bool
	Limit   Limit
	// Run is the queued run, or the queued or running one the command
	// coalesced with (Coalesced).
	Run       *Run
	Coalesced bool
	// Upgraded is true when the command asked for a full review or a
	// description and the queued run it coalesced with lacked one: that
	// run now has it.
	Upgraded bool
	// Dismissed is true when Command.Dismiss dismissed an open finding
	// (false when it was not open).
	Dismissed bool
	// Learning is the learning Command.LearnThread activated; nil when
	// the thread had none proposed.
	Learning *review.Learning
}

// Limit names a command rate limit.
type Limit string

// The command rate limits (see MaxCommandsPerPR, MaxCommandsPerUser).
const (
	LimitPR   Limit = "pull_request"
	LimitUser Limit = "user"
)

// Outcomes set by RecordCommand (and OutcomeQueued).
const (
	OutcomeCoalesced   = "coalesced"    // a review of the head was already queued or running
	OutcomeRateLimited = "rate_limited" // over a command rate limit; nothing done
)

// RecordCommand records the delivery d (d.ID required, d.Repository the
// pull request's owner/name, d.Outcome what intake will answer) of the
// comment command c and carries it out, in one transaction:
//
//   - a redelivery is reported Duplicate and changes nothing;
//   - a command over a rate limit — MaxCommandsPerPR on the pull request
//     or MaxCommandsPerUser by c.User within CommandWindow, counting the
//     commands carried out — is recorded OutcomeRateLimited and does
//     nothing; Notify tells the first one of the window;
//   - otherwise c.Pause is set, c.Dismiss and c.LearnThread applied, and
//     c.Run queued. A review (ModePR) is not queued when a run of its
//     head is queued (any trigger; a queued automatic run becomes a
//     requested one) or running on request, which it then returns
//     (OutcomeCoalesced). A full review (c.Run.Options {"full": true})
//     or one that describes the pull request ({"describe": true})
//     coalesces with a queued run, which takes on those options
//     (Upgraded), or with a running one that has them all; a running run
//     without them does not stand for it, so it is queued behind that
//     run. An answer
//     (ModeAnswer) is always queued: it neither coalesces with nor
//     supersedes reviews.
//
// Commands of a pull request and of a user are serialized by advisory
// locks, so the limits hold across replicas.
func (s *Store) RecordCommand(ctx context.Context, d Delivery, c Command) (CommandResult, error) {
	d.PRNumber, d.Sender, d.Command = c.PRNumber, c.User, c.Name
	if c.Run != nil {
		d.HeadSHA = c.Run.HeadSHA
	}
	var res CommandResult
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		isNew, err := insertDeliveryTx(ctx, tx, d)
		if err != nil || !isNew {
			res.Duplicate = !isNew
			return err
		}
		if res.Limit, res.Notify, err = overLimit(ctx, tx, d); err != nil || res.Limit != "" {
			res.Limited = res.Limit != ""
			return err
		}
		if err := applyCommand(ctx, tx, d, c, &res); err != nil || c.Run == nil {
			return err
		}
		return commandRun(ctx, tx, d, *c.Run, &res)
	})
	if err != nil {
		return CommandResult{}, fmt.Errorf("record command %s of delivery %s: %w", c.Name, d.ID, err)
	}
	return res, nil
}

const (
	lockUserCommands = `SELECT pg_advisory_xact_lock(hashtextextended('commands:' || lower($1), 0))`

	// countCommands counts the commands carried out on the pull request and
	// by the user within the window, and whether one over a limit was
	// recorded there (and answered) already.
	countCommands = `SELECT
		    count(*) FILTER (WHERE repository = $1 AND pr_number = $2 AND outcome <> 'rate_limited'),
		    count(*) FILTER (WHERE lower(sender) = lower($3) AND outcome <> 'rate_limited'),
		    count(*) FILTER (WHERE outcome = 'rate_limited') > 0
		FROM webhook_deliveries
		WHERE command <> '' AND delivery_id <> $4 AND received_at > now() - $5 * interval '1 millisecond'
		  AND ((repository = $1 AND pr_number = $2) OR lower(sender) = lower($3))`
)

// overLimit returns the limit the command d (inserted in tx) is over,
// after recording it OutcomeRateLimited, and whether it is the first over
// a limit on its pull request or by its user within the window; "" when
// it is within the limits.
func overLimit(ctx context.Context, tx pgx.Tx, d Delivery) (limit Limit, notify bool, err error) {
	if _, err := tx.Exec(ctx, lockPullRequest, d.Repository, d.PRNumber); err != nil {
		return "", false, err
	}
	if _, err := tx.Exec(ctx, lockUserCommands, d.Sender); err != nil {
		return "", false, err
	}
	var (
		onPR, byUser int
		answered     bool
	)
	err = tx.QueryRow(ctx, countCommands, d.Repository, d.PRNumber, d.Sender, d.ID, CommandWindow.Milliseconds()).
		Scan(&onPR, &byUser, &answered)
	if err != nil {
		return "", false, err
	}
	switch {
	case onPR >= MaxCommandsPerPR:
		limit = LimitPR
	case byUser >= MaxCommandsPerUser:
		limit = LimitUser
	default:
		return "", false, nil
	}
	detail := fmt.Sprintf("over the %s limit: %d commands on the pull request, %d by %s in %v",
		limit, onPR, byUser, d.Sender, CommandWindow)
	_, err = tx.Exec(ctx, setDeliveryOutcome, d.ID, OutcomeRateLimited, detail)
	return limit, !answered, err
}

// applyCommand makes the changes c asks for other than a run, in tx: the
// pause switch, a dismissal, a learning activated.
func applyCommand(ctx context.Context, tx pgx.Tx, d Delivery, c Command, res *CommandResult) error {
	if c.Pause != nil {
		if _, err := tx.Exec(ctx, setPaused, d.Repository, c.PRNumber, *c.Pause, c.User); err != nil {
			return err
		}
	}
	if c.Dismiss != nil {
		var err error
		res.Dismissed, err = dismissFinding(ctx, tx, d.Repository, c.PRNumber, c.Dismiss.Fingerprint, c.User, c.Dismiss.How)
		if err != nil {
			return fmt.Errorf("dismiss finding %s: %w", c.Dismiss.Fingerprint, err)
		}
	}
	if c.LearnThread != 0 {
		l, err := activateThreadLearning(ctx, tx, d.Repository, c.PRNumber, c.LearnThread, c.User)
		switch {
		case err == nil:
			res.Learning = &l
		case !errors.Is(err, ErrNotFound):
			return fmt.Errorf("activate the learning of thread %d: %w", c.LearnThread, err)
		}
	}
	return nil
}

const (
	// selectActiveTwin finds a run of the head that a command need not
	// repeat: queued (any trigger), or running on request and not asked to
	// stop. A running automatic run may still end skipped by the
	// repository's gates, which a requested review ignores. A running run
	// stands for the command only when its options hold the flags the
	// command asks for ($4: full review, description): a queued run can
	// still be given them.
	selectActiveTwin = `SELECT ` + runColumns + ` FROM review_runs
		WHERE repository = $1 AND pr_number = $2 AND head_sha = $3 AND mode = 'pr'
		  AND (status = 'queued' OR (status = 'running' AND trigger = 'command' AND NOT cancel_requested
		       AND options @> $4::jsonb))
		ORDER BY status = 'running' DESC, created_at DESC LIMIT 1`

	// requestRun makes a queued run a requested one (its requester is
	// kept when it was one already) with the flags $3 added to its
	// options.
	requestRun = `UPDATE review_runs SET trigger = 'command',
		    requested_by = CASE WHEN trigger = 'command' THEN requested_by ELSE $2 END,
		    options = options || $3::jsonb
		WHERE id = $1 AND status = 'queued' RETURNING ` + runColumns
)

// runFlags are the options of a pull request run that a command asks for
// and a coalesced run must take on: review.Options' "full" and
// "describe" keys.
type runFlags struct {
	Full     bool `json:"full,omitempty"`
	Describe bool `json:"describe,omitempty"`
}

// flagsOf reads the flags of run options; bad options have none.
func flagsOf(options json.RawMessage) runFlags {
	var f runFlags
	if len(options) > 0 && json.Unmarshal(options, &f) != nil {
		return runFlags{}
	}
	return f
}

// json is the flags as a JSON object holding the set ones only.
func (f runFlags) json() string {
	b, _ := json.Marshal(f) // two booleans always marshal
	return string(b)
}

// lacks reports whether f holds a flag that have does not.
func (f runFlags) lacks(have runFlags) bool {
	return (f.Full && !have.Full) || (f.Describe && !have.Describe)
}

// commandRun queues the run a command asks for, or coalesces a review
// with a run of its head already queued or running, in tx, and records
// what was done as d's outcome.
func commandRun(ctx context.Context, tx pgx.Tx, d Delivery, r NewRun, res *CommandResult) error {
	if r.Mode == ModePR && r.HeadSHA != "" {
		if coalesced, err := coalesce(ctx, tx, d, r, res); err != nil || coalesced {
			return err
		}
	}
	r.DeliveryID = d.ID
	run, err := enqueue(ctx, tx, r)
	if err != nil {
		return err
	}
	res.Run = &run
	_, err = tx.Exec(ctx, setDeliveryOutcome, d.ID, OutcomeQueued, "run "+run.ID)
	return err
}

// coalesce finds a run of the review r's head that stands for it, queued
// or running (selectActiveTwin), makes a queued one requested (and full
// when r is), and records d as coalesced with it; false when there is
// none.
func coalesce(ctx context.Context, tx pgx.Tx, d Delivery, r NewRun, res *CommandResult) (bool, error) {
	flags := flagsOf(r.Options)
	twin, err := queryRun(ctx, tx, selectActiveTwin, r.Repository, r.PRNumber, r.HeadSHA, flags.json())
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return false, nil
	case err != nil:
		return false, err
	}
	detail := "run " + twin.ID + " of head " + twin.HeadSHA + " already " + string(twin.Status)
	// selectActiveTwin returns a running run only when it has every
	// flag, so an upgrade is always of a queued run.
	res.Upgraded = flags.lacks(flagsOf(twin.Options))
	if twin.Status == StatusQueued && (twin.Trigger != TriggerCommand || res.Upgraded) {
		if twin, err = queryRun(ctx, tx, requestRun, twin.ID, r.RequestedBy, flags.json()); err != nil {
			return false, err
		}
	}
	if res.Upgraded {
		detail += "; now with options " + flags.json()
	}
	res.Run, res.Coalesced = &twin, true
	_, err = tx.Exec(ctx, setDeliveryOutcome, d.ID, OutcomeCoalesced, detail)
	return true, err
}
