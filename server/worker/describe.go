package worker

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/mergeguard/mergeguard/github"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/lifecycle"
	"github.com/mergeguard/mergeguard/server/store"
)

// This file is the job's side of /mergeguard describe: what to describe
// and how is lifecycle.Describing's.

// describeAsked reports whether a run was asked to describe its pull
// request; options that do not decode are reported by the review.
func describeAsked(run *store.Run) bool {
	var o review.Options
	return len(run.Options) > 0 && json.Unmarshal(run.Options, &o) == nil && o.Describe
}

// describing is the describe use case of a job's pull request.
func (p *Pool) describing(j *job, repo Repo) lifecycle.Describing {
	run := j.run
	return lifecycle.Describing{GitHub: describer{repo}, Reviews: ledger{p.deps.Store}, PublicURL: p.deps.PublicURL,
		Retry: func(err error) bool {
			_, ok := transient(err)
			return ok && run.Attempts < run.MaxAttempts
		}}
}

// describeFromReview writes the description of a describe run from the
// succeeded review of its head (lifecycle.Describing.FromReview); done is
// false when the run must review first.
func (p *Pool) describeFromReview(ctx context.Context, j *job, repo Repo) (out outcome, done bool, err error) {
	d, err := p.describing(j, repo).FromReview(ctx, pullOf(j.run), j.run.HeadSHA)
	if d.Done {
		j.noCheck = true // nothing is reviewed: the head's check stays the review's
	}
	if err != nil || !d.Done {
		return outcome{}, d.Done, err
	}
	if d.Problem != nil {
		j.log.Warn().Err(d.Problem).Msg("the description was not written")
	}
	out = skipped(d.Skipped)
	out.notice = d.Notice
	return out, true, nil
}

// describer is a repository as the lifecycle's Describer.
type describer struct{ Repo }

func (d describer) Describe(ctx context.Context, number int, desc lifecycle.Description) (bool, error) {
	changed, err := d.Repo.Describe(ctx, number, github.Description{Walkthrough: desc.Walkthrough, HeadSHA: desc.HeadSHA, DetailsURL: desc.DetailsURL})
	if errors.Is(err, github.ErrDescriptionTooLong) {
		return changed, lifecycle.DescriptionTooLong(err)
	}
	return changed, err
}
