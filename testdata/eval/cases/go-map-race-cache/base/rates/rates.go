package rates

import "sync"

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

// Rate returns the rate of currency, fetching when unknown.
func (c *Cache) Rate(currency string) (float64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.rates[currency]; ok {
		return r, true
	}
	fresh, err := c.fetch()
	if err != nil {
		return 0, false
	}
	c.rates = fresh
	r, ok := c.rates[currency]
	return r, ok
}
