package worker

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mergeguard/mergeguard/github"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/lifecycle"
	"github.com/mergeguard/mergeguard/review/pipeline"
	"github.com/mergeguard/mergeguard/server/store"
)

// This file is what makes a pull request's reviews converge
// (docs/architecture.md): the history a review starts from (the ledger,
// healed from GitHub's thread states, and what changed since the last
// reviewed head), and what follows a posted review (fixed findings' threads
// resolved).

// history is what a pull request run starts from.
type history struct {
	pipeline *pipeline.History
	// followUp is set when the pull request was reviewed before: the
	// review body then reads as a follow-up.
	followUp bool
	// resolved are the review threads GitHub holds resolved.
	resolved map[string]bool
}

// loadHistory reads the pull request's ledger, applies what people did to
// MergeGuard's threads since (a missed delivery heals here), and finds out
// whether the new head only adds commits to the last reviewed one.
func (p *Pool) loadHistory(ctx context.Context, j *job, repo Repo, opts review.Options) (history, error) {
	run := j.run
	ledger, resolved, err := p.healedLedger(ctx, j, repo)
	if err != nil {
		return history{}, err
	}
	h := history{pipeline: &pipeline.History{Ledger: ledger}, resolved: resolved}
	last, err := p.lastReview(ctx, j)
	if err != nil {
		return history{}, err
	}
	h.followUp = last.Found
	head := lifecycle.Head{SHA: run.HeadSHA, BaseSHA: run.BaseSHA}
	if h.pipeline.FullReason = lifecycle.FullReason(last, head, opts.Full); h.pipeline.FullReason != "" {
		return h, nil
	}
	cmp, err := repo.Compare(ctx, last.HeadSHA, run.HeadSHA)
	if err != nil && !errors.Is(err, review.ErrNotFound) {
		if _, ok := github.Transient(err); ok {
			return history{}, err
		}
		j.log.Warn().Err(err).Msg("compare with the last reviewed head")
	}
	h.pipeline.Since, h.pipeline.FullReason = lifecycle.Compared(last, cmp, err)
	return h, nil
}

// lastReview is what the pull request's last review left, the zero
// LastReview when it was never reviewed.
func (p *Pool) lastReview(ctx context.Context, j *job) (lifecycle.LastReview, error) {
	run := j.run
	last, err := p.deps.Store.LastReview(ctx, run.Repository, run.PRNumber, run.ID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return lifecycle.LastReview{}, nil
	case err != nil:
		return lifecycle.LastReview{}, err
	}
	return lifecycle.LastReview{Found: true, Succeeded: last.Status == store.StatusSucceeded, KeptLedger: last.ReviewKind != "",
		HeadSHA: last.HeadSHA, BaseSHA: last.BaseSHA, ConfigDigest: last.ConfigDigest}, nil
}

// healedLedger reads the ledger and records on it the thread states GitHub
// holds (best effort: without them the ledger is as the deliveries left
// it). It returns the ledger and the resolved threads.
func (p *Pool) healedLedger(ctx context.Context, j *job, repo Repo) ([]review.LedgerEntry, map[string]bool, error) {
	run := j.run
	ledger, err := p.deps.Store.Ledger(ctx, run.Repository, run.PRNumber)
	if err != nil || len(ledger) == 0 {
		return ledger, nil, err
	}
	threads, err := repo.Threads(ctx, run.PRNumber)
	if err != nil {
		j.log.Warn().Err(err).Msg("read review threads; the ledger keeps the states deliveries gave it")
		return ledger, nil, nil
	}
	resolved, writers, applied := map[string]bool{}, newWriters(repo), 0
	changed := false
	for _, t := range threads {
		resolved[t.ID] = t.Resolved
		e, ok := entryOf(ledger, t)
		if !ok || (t.Resolved && t.ResolvedBy == repo.Login()) {
			continue // not MergeGuard's finding, or resolved by MergeGuard as fixed
		}
		change := store.ThreadChange{ThreadID: t.ID, CommentID: t.CommentID, Resolved: t.Resolved, By: t.ResolvedBy}
		dismisses := t.Resolved && e.State == review.FindingOpen
		reopens := !t.Resolved && e.State == review.FindingDismissed && review.ReopensOnUnresolve(e.StateHow)
		if dismisses && !writers.can(ctx, j, t.ResolvedBy) {
			j.log.Info().Str("thread", t.ID).Str("by", t.ResolvedBy).Msg("a thread resolved by someone without write access dismisses nothing")
			dismisses, change.Resolved = false, false // learn the thread's id only
		}
		if !dismisses && !reopens && e.ThreadID == t.ID {
			continue // the ledger already says so
		}
		c, err := p.deps.Store.ApplyThread(ctx, run.Repository, run.PRNumber, change)
		if err != nil {
			return nil, nil, err
		}
		applied++
		changed = changed || c
	}
	if p.healReactions(ctx, j, repo, ledger, writers) {
		applied, changed = applied+1, true
	}
	if changed {
		j.log.Info().Msg("what people did to MergeGuard's threads since the last review was applied to the ledger")
	}
	if applied == 0 {
		return ledger, resolved, nil
	}
	// Read back: states changed, thread ids were learned.
	ledger, err = p.deps.Store.Ledger(ctx, run.Repository, run.PRNumber)
	return ledger, resolved, err
}

// entryOf returns the ledger entry review thread t was posted for: by the
// thread's id, or by its first comment when the ledger does not know the
// id yet.
func entryOf(ledger []review.LedgerEntry, t review.ReviewThread) (review.LedgerEntry, bool) {
	for _, e := range ledger {
		if (e.ThreadID != "" && e.ThreadID == t.ID) || (e.CommentID != 0 && e.CommentID == t.CommentID) {
			return e, true
		}
	}
	return review.LedgerEntry{}, false
}

// maxReactionReads bounds the comments whose reactions a review reads.
const maxReactionReads = 30

// healReactions applies people's reactions on the comments of open
// findings (GitHub sends no webhook for them): a writer's 👎 dismisses the
// finding as feedback, a 👍 is recorded as agreement. It is best effort and
// reports whether a finding was dismissed.
func (p *Pool) healReactions(ctx context.Context, j *job, repo Repo, ledger []review.LedgerEntry, w *writers) bool {
	run, read, dismissed := j.run, 0, false
	for _, e := range ledger {
		// An exposed secret too: a writer's 👎 is an explicit dismissal.
		if (e.State != review.FindingOpen && e.State != review.FindingExposed) || e.CommentID == 0 || read >= maxReactionReads {
			continue
		}
		read++
		reactions, err := repo.Reactions(ctx, e.CommentID)
		if err != nil {
			j.log.Warn().Err(err).Int64("comment", e.CommentID).Msg("read reactions")
			continue
		}
		done := false
		for _, x := range reactions {
			if x.Login == repo.Login() || strings.HasSuffix(x.Login, "[bot]") {
				continue
			}
			switch {
			case x.Content == "-1" && !done && w.can(ctx, j, x.Login):
				ok, err := p.deps.Store.DismissFinding(ctx, run.Repository, run.PRNumber, e.Finding.Fingerprint, x.Login, review.DismissedFeedback)
				if err != nil {
					j.log.Warn().Err(err).Msg("dismiss a finding after a 👎")
				}
				if ok {
					done, dismissed = true, true
					p.acknowledge(ctx, j, repo, e, "Dismissed after a 👎 from "+x.Login+": MergeGuard will not raise it again on this pull request.")
				}
			case x.Content == "+1":
				if err := p.deps.Store.RecordAgreement(ctx, run.Repository, run.PRNumber, e.Finding.Fingerprint, x.Login); err != nil {
					j.log.Warn().Err(err).Msg("record a 👍")
				}
			}
		}
	}
	return dismissed
}

// acknowledge replies once in a dismissed finding's thread and resolves
// it; best effort.
func (p *Pool) acknowledge(ctx context.Context, j *job, repo Repo, e review.LedgerEntry, text string) {
	if _, err := repo.Reply(ctx, j.run.PRNumber, e.CommentID, text); err != nil {
		j.log.Warn().Err(err).Msg("acknowledge a dismissal")
	}
	if err := lifecycle.ResolveThreadOf(ctx, repo, j.run.PRNumber, e); err != nil {
		j.log.Warn().Err(err).Msg("resolve a dismissed finding's thread")
	}
}

// writers answers, once per login, whether people may push to the
// repository: only their resolutions dismiss findings (GitHub also lets a
// pull request's author resolve threads).
type writers struct {
	repo  Repo
	known map[string]bool
}

func newWriters(repo Repo) *writers { return &writers{repo: repo, known: map[string]bool{}} }

func (w *writers) can(ctx context.Context, j *job, login string) bool {
	if ok, seen := w.known[login]; seen {
		return ok
	}
	ok, err := w.repo.CanWrite(ctx, login)
	if err != nil {
		j.log.Warn().Err(err).Str("login", login).Msg("check write access; the resolution dismisses nothing this time")
		return false // asked again at the next review
	}
	w.known[login] = ok
	return ok
}

// followUp is the follow-up part of the review body.
func followUp(res *pipeline.Result) *github.FollowUp {
	l := res.Ledger
	var exposed []review.LedgerEntry
	for _, e := range l.All {
		if e.State == review.FindingExposed {
			exposed = append(exposed, e)
		}
	}
	return &github.FollowUp{Scope: res.Scope, Fixed: l.Fixed, StillOpen: l.StillOpen, Dismissed: l.Dismissed,
		Exposed: exposed, BlockingCleared: l.BlockingCleared}
}

// withPlacements records on the ledger entries where their findings were
// posted.
func withPlacements(entries []review.LedgerEntry, placed map[string]review.Placement) []review.LedgerEntry {
	out := make([]review.LedgerEntry, len(entries))
	for i, e := range entries {
		if pl, ok := placed[e.Finding.Fingerprint]; ok && pl.CommentID != 0 {
			e.CommentID = pl.CommentID
		}
		out[i] = e
	}
	return out
}

// resolveFixed resolves the review threads of the findings a review found
// fixed, each with one reply naming the commit. It is best effort: a
// failure is logged, the ledger already says fixed. A thread already
// resolved (an earlier attempt of the run) gets no second reply.
func (p *Pool) resolveFixed(ctx context.Context, j *job, repo Repo, fixed []review.LedgerEntry, resolved map[string]bool) {
	for _, e := range fixed {
		if e.ThreadID == "" || resolved[e.ThreadID] {
			continue
		}
		if e.CommentID != 0 {
			if _, err := repo.Reply(ctx, j.run.PRNumber, e.CommentID, fmt.Sprintf("Fixed in %s.", short(e.FixedSHA))); err != nil {
				j.log.Warn().Err(err).Str("fingerprint", e.Finding.Fingerprint).Msg("reply in a fixed finding's thread")
			}
		}
		if err := repo.ResolveThread(ctx, e.ThreadID); err != nil {
			p.deps.Metrics.PostFailure("resolve_thread")
			j.log.Warn().Err(err).Str("fingerprint", e.Finding.Fingerprint).Msg("resolve a fixed finding's thread")
		}
	}
}

// replyExposed answers once in the thread of each secret the review found
// exposed: it was pushed, so removing it does not un-leak it. Best effort,
// as resolveFixed; the thread stays open.
func (p *Pool) replyExposed(ctx context.Context, j *job, repo Repo, exposed []review.LedgerEntry) {
	for _, e := range exposed {
		if e.CommentID == 0 {
			continue
		}
		if p.repliedExposed(ctx, j, repo, e) {
			continue // an earlier attempt of the run replied
		}
		if _, err := repo.Reply(ctx, j.run.PRNumber, e.CommentID, exposedReply(e)); err != nil {
			j.log.Warn().Err(err).Str("fingerprint", e.Finding.Fingerprint).Msg("reply in an exposed secret's thread")
		}
	}
}

// exposedReplyStart begins the reply in an exposed secret's thread.
const exposedReplyStart = "This secret is no longer in the pull request's diff"

// repliedExposed reports whether MergeGuard's bot already answered in the
// thread of the exposed entry e; a thread that cannot be read counts as
// not answered.
func (p *Pool) repliedExposed(ctx context.Context, j *job, repo Repo, e review.LedgerEntry) bool {
	msgs, err := repo.ThreadMessages(ctx, j.run.PRNumber, e.CommentID)
	if err != nil {
		j.log.Warn().Err(err).Str("fingerprint", e.Finding.Fingerprint).Msg("read an exposed secret's thread")
		return false
	}
	for _, m := range msgs {
		if m.Bot && strings.HasPrefix(m.Body, exposedReplyStart) {
			return true
		}
	}
	return false
}

// exposedReply is the one reply in an exposed secret's thread.
func exposedReply(e review.LedgerEntry) string {
	s := fmt.Sprintf(exposedReplyStart+", but commit %s pushed it: it stays in the branch's history on GitHub. "+
		"Treat it as leaked and rotate the credential.", short(e.FirstSeenSHA))
	if e.StateHow == review.ExposedWarning {
		return s + " It no longer blocks this pull request (`secrets.removed: warn`)."
	}
	return s + " It keeps blocking this pull request until someone with write access dismisses it with `/mergeguard ignore` in this thread."
}

// detailsURL is the run's page in the web UI, "" without a public URL.
func (p *Pool) detailsURL(runID string) string {
	return lifecycle.RunPage(p.deps.PublicURL, runID)
}
