package rates

import (
	"context"
	"sync"
	"time"
)

// Cache holds exchange rates by currency.
type Cache struct {
	mu    sync.Mutex
	rates map[string]float64
	fetch func() (map[string]float64, error)
}

// New returns a cache that fetches with fetch.
func New(fetch func() (map[string]float64, error)) *Cache {
	return &Cache{rates: map[string]float64{}, fetch: fetch}
}

// Rate returns the rate of currency.
func (c *Cache) Rate(currency string) (float64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.rates[currency]
	return r, ok
}

// Refresh fetches the rates every interval until ctx ends.
func (c *Cache) Refresh(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			fresh, err := c.fetch()
			if err != nil {
				continue
			}
			for k, v := range fresh {
				c.rates[k] = v
			}
		}
	}
}
