package store_test

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/mergeguard/mergeguard/server/store"
	"github.com/mergeguard/mergeguard/server/store/storetest"
)

// BenchmarkRecordDelivery measures webhook intake: recording a delivery and
// queuing its run (each one superseding the previous run of its pull
// request, over 100 pull requests), and recording a redelivery.
func BenchmarkRecordDelivery(b *testing.B) {
	s := storetest.New(b)
	var n atomic.Int64
	delivery := func(i int64) store.Delivery {
		return store.Delivery{
			ID: fmt.Sprintf("delivery-%d", i), Event: "pull_request", Action: "synchronize",
			InstallationID: 7, Repository: "o/bench",
		}
	}
	b.Run("new", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				i := n.Add(1)
				run := prRun("o/bench", int(i%100)+1, fmt.Sprintf("head-%d", i))
				res, err := s.RecordDelivery(b.Context(), delivery(i), &run)
				if err != nil || res.Duplicate || res.Run == nil {
					b.Errorf("RecordDelivery = %+v, %v; want a new run", res, err)
					return
				}
			}
		})
	})
	b.Run("redelivery", func(b *testing.B) {
		recorded := n.Load()
		var m atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				i := m.Add(1)%recorded + 1
				run := prRun("o/bench", int(i%100)+1, fmt.Sprintf("head-%d", i))
				res, err := s.RecordDelivery(b.Context(), delivery(i), &run)
				if err != nil || !res.Duplicate {
					b.Errorf("RecordDelivery = %+v, %v; want a duplicate", res, err)
					return
				}
			}
		})
	})
}
