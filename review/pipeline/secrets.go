package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/analyzer"
	"github.com/mergeguard/mergeguard/review/diff"
)

// secretAnalyzers returns the pipeline's analyzers configured for this
// review's repository (analyzer.ForRepo): its .gitleaks.toml and
// .gitleaksignore read from the base revision, never the head, so that a
// pull request cannot allowlist its own secret, and secrets.block_in_tests.
// The notes say what could not be used, and that a change to those files
// in the pull request is not honoured until it is merged.
func (r *run) secretAnalyzers(ctx context.Context, repo config.Repo, head string, d *diff.Diff) ([]analyzer.Analyzer, []string) {
	var notes []string
	sr := analyzer.SecretsRepo{Commit: head, BlockInTests: repo.Secrets.BlockInTests}
	for _, f := range []struct {
		name  string
		limit int
		into  *[]byte
	}{
		{analyzer.GitleaksConfigFile, analyzer.MaxGitleaksConfigBytes, &sr.Gitleaks},
		{analyzer.GitleaksIgnoreFile, analyzer.MaxGitleaksIgnoreBytes, &sr.Ignore},
	} {
		data, err := r.req.Source.ReadFile(ctx, f.name, review.Base)
		switch {
		case errors.Is(err, review.ErrNotFound), errors.Is(err, review.ErrUnsupported):
			// none, or a bare diff without a base to read
		case err != nil:
			notes = append(notes, fmt.Sprintf("%s could not be read from the base branch (%v): it was not applied.", f.name, err))
		default:
			*f.into = data
		}
	}
	analyzers, more := analyzer.ForRepo(r.p.d.Analyzers, sr)
	notes = append(notes, more...)
	for _, f := range d.Files {
		for _, name := range []string{analyzer.GitleaksConfigFile, analyzer.GitleaksIgnoreFile} {
			if f.NewPath == name || f.OldPath == name {
				notes = append(notes, fmt.Sprintf("This change edits %s: the secret scan used the base branch's version; the change applies once it is merged.", name))
			}
		}
	}
	return analyzers, notes
}

// builtins are the analyzers of the review: those configured for the
// repository, or the pipeline's before they are.
func (r *run) builtins() []analyzer.Analyzer {
	if r.analyzers != nil {
		return r.analyzers
	}
	return r.p.d.Analyzers
}
