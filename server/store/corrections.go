package store

import (
	"context"
	"fmt"
	"math"

	"github.com/jackc/pgx/v5"

	"github.com/mergeguard/mergeguard/review/budget"
)

// This file keeps the token corrections of models without a known
// tokenizer (migration 000006); *Store implements budget.CorrectionStore.

// Corrections returns every model's token correction.
func (s *Store) Corrections(ctx context.Context) ([]budget.Correction, error) {
	rows, err := s.pool.Query(ctx, `SELECT model, ratio, samples, updated_at FROM model_token_corrections ORDER BY model`)
	if err != nil {
		return nil, fmt.Errorf("read token corrections: %w", err)
	}
	cs, err := pgx.CollectRows(rows, scanCorrection)
	if err != nil {
		return nil, fmt.Errorf("read token corrections: %w", err)
	}
	return cs, nil
}

// ObserveRatio records one prompt's ratio of the server's prompt tokens to
// o200k_base's count for model: the stored ratio becomes the larger of
// the two (so concurrent replicas never lower it) and the samples one
// more. It returns the stored correction.
func (s *Store) ObserveRatio(ctx context.Context, model string, ratio float64) (budget.Correction, error) {
	if model == "" || !(ratio > 0) || math.IsInf(ratio, 0) {
		return budget.Correction{}, fmt.Errorf("observe token ratio %v of model %q: invalid", ratio, model)
	}
	rows, err := s.pool.Query(ctx, `INSERT INTO model_token_corrections AS c (model, ratio, samples)
		VALUES ($1, $2, 1)
		ON CONFLICT (model) DO UPDATE SET ratio = GREATEST(c.ratio, EXCLUDED.ratio),
			samples = c.samples + 1, updated_at = now()
		RETURNING model, ratio, samples, updated_at`, model, ratio)
	if err != nil {
		return budget.Correction{}, fmt.Errorf("observe token ratio of model %q: %w", model, err)
	}
	c, err := pgx.CollectExactlyOneRow(rows, scanCorrection)
	if err != nil {
		return budget.Correction{}, fmt.Errorf("observe token ratio of model %q: %w", model, err)
	}
	return c, nil
}

func scanCorrection(row pgx.CollectableRow) (budget.Correction, error) {
	var (
		c       budget.Correction
		samples int64
	)
	err := row.Scan(&c.Model, &c.Ratio, &samples, &c.UpdatedAt)
	c.Samples = int(min(samples, math.MaxInt32))
	return c, err
}
