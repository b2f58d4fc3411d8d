package store

import "context"

// RecordBatch records deliveries[i] with runs[i] as one Intake batch, in
// that order, for tests that need a batch's exact composition.
func (s *Store) RecordBatch(ctx context.Context, deliveries []Delivery, runs []*NewRun) ([]DeliveryResult, error) {
	items := make([]batchItem, len(deliveries))
	for i, d := range deliveries {
		items[i] = batchItem{d: d, run: runs[i]}
	}
	return s.recordBatch(ctx, items)
}
