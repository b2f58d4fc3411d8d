package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/analyzer"
	"github.com/mergeguard/mergeguard/review/diff"
)

// The repository's gitleaks files, at its root, as gitleaks reads them.
const (
	gitleaksConfigFile = ".gitleaks.toml"
	gitleaksIgnoreFile = ".gitleaksignore"
)

// repoSecrets reads the repository's .gitleaks.toml and .gitleaksignore at
// the base revision, for the secret scanner (analyzer.RepoSecrets): a pull
// request cannot allowlist its own secret. It returns the review's notes:
// what of the files could not be used, and a change the head makes to
// them, which is not honoured until it is merged.
func (r *run) repoSecrets(ctx context.Context, d *diff.Diff) []string {
	var notes []string
	for _, f := range d.Files {
		if p := f.Path(); p == gitleaksConfigFile || p == gitleaksIgnoreFile {
			notes = append(notes, fmt.Sprintf("This pull request changes %s: the secret scan uses the base branch's until it is merged.", p))
		}
	}
	toml, err1 := r.readBase(ctx, gitleaksConfigFile, analyzer.MaxGitleaksConfigBytes)
	ignore, err2 := r.readBase(ctx, gitleaksIgnoreFile, analyzer.MaxGitleaksIgnoreBytes)
	if err := errors.Join(err1, err2); err != nil {
		return append(notes, "The repository's gitleaks files could not be read; the secret scan used gitleaks' default rules alone: "+err.Error())
	}
	if toml == nil && ignore == nil {
		return notes
	}
	rs, err := analyzer.ParseRepoSecrets(toml, ignore)
	if err != nil {
		return append(notes, "The repository's gitleaks configuration could not be used; the secret scan used gitleaks' default rules alone: "+err.Error())
	}
	for _, n := range rs.Notes {
		notes = append(notes, gitleaksConfigFile+": "+n+".")
	}
	if !rs.Empty() {
		r.secrets = rs
	}
	return notes
}

// readBase reads a file at the base revision, at most limit bytes: nil
// when it is not there, an error when it cannot be read or is larger.
func (r *run) readBase(ctx context.Context, path string, limit int) ([]byte, error) {
	b, err := r.req.Source.ReadFile(ctx, path, review.Base)
	switch {
	case errors.Is(err, review.ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("%s: %w", path, err)
	case len(b) > limit:
		return nil, fmt.Errorf("%s is larger than %d KiB", path, limit>>10)
	}
	return b, nil
}

// analyzers are the pipeline's built-in analyzers for this review: the
// secret scanner with the repository's gitleaks configuration when it has
// one.
func (r *run) analyzers() []analyzer.Analyzer {
	all := r.p.d.Analyzers
	if r.secrets == nil {
		return all
	}
	out := make([]analyzer.Analyzer, len(all))
	for i, a := range all {
		out[i] = a
		if s, ok := a.(*analyzer.Secrets); ok {
			out[i] = s.WithRepo(r.secrets, r.headSHA)
		}
	}
	return out
}
