package store

import (
	"context"
	"fmt"
	"math"

	"github.com/jackc/pgx/v5"

	"github.com/mergeguard/mergeguard/review/budget"
)

// This file keeps the token corrections of models without a known
// tokenizer (migrations 000006 and 000007: a ratio for the ASCII and one
// for the non-ASCII part of a prompt); *Store implements
// budget.CorrectionStore.

// Corrections returns every model's token correction.
func (s *Store) Corrections(ctx context.Context) ([]budget.Correction, error) {
	rows, err := s.pool.Query(ctx, `SELECT model, ratio, samples, other_ratio, other_samples, updated_at FROM model_token_corrections ORDER BY model`)
	if err != nil {
		return nil, fmt.Errorf("read token corrections: %w", err)
	}
	cs, err := pgx.CollectRows(rows, scanCorrection)
	if err != nil {
		return nil, fmt.Errorf("read token corrections: %w", err)
	}
	return cs, nil
}

// ObserveRatio records one prompt's sample for model (what
// budget.Correction.Teach returned): the stored ratio of the part it
// teaches becomes the larger of the two (so concurrent replicas never
// lower it) and, when the sample counts, that part's samples one more. It
// returns the stored correction.
func (s *Store) ObserveRatio(ctx context.Context, model string, smp budget.Sample) (budget.Correction, error) {
	if model == "" || !(smp.Ratio >= 0) || math.IsInf(smp.Ratio, 0) {
		return budget.Correction{}, fmt.Errorf("observe token ratio %v of model %q: invalid", smp.Ratio, model)
	}
	c := budget.Correction{}.Observe(smp) // what the sample adds
	rows, err := s.pool.Query(ctx, `INSERT INTO model_token_corrections AS c (model, ratio, samples, other_ratio, other_samples)
		VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (model) DO UPDATE SET ratio = GREATEST(c.ratio, EXCLUDED.ratio),
			samples = c.samples + EXCLUDED.samples,
			other_ratio = GREATEST(c.other_ratio, EXCLUDED.other_ratio),
			other_samples = c.other_samples + EXCLUDED.other_samples, updated_at = now()
		RETURNING model, ratio, samples, other_ratio, other_samples, updated_at`,
		model, c.Ratio, c.Samples, c.OtherRatio, c.OtherSamples)
	if err != nil {
		return budget.Correction{}, fmt.Errorf("observe token ratio of model %q: %w", model, err)
	}
	k, err := pgx.CollectExactlyOneRow(rows, scanCorrection)
	if err != nil {
		return budget.Correction{}, fmt.Errorf("observe token ratio of model %q: %w", model, err)
	}
	return k, nil
}

func scanCorrection(row pgx.CollectableRow) (budget.Correction, error) {
	var (
		c                     budget.Correction
		samples, otherSamples int64
	)
	err := row.Scan(&c.Model, &c.Ratio, &samples, &c.OtherRatio, &otherSamples, &c.UpdatedAt)
	c.Samples = int(min(samples, math.MaxInt32))
	c.OtherSamples = int(min(otherSamples, math.MaxInt32))
	return c, err
}
