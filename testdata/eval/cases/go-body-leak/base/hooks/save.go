package hooks

import (
	"context"
	"errors"
	"net/url"
)

// Store saves webhook URLs.
type Store interface {
	Save(ctx context.Context, u string) error
}

// Save validates and saves a webhook URL.
func Save(ctx context.Context, s Store, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" {
		return errors.New("webhook URL must be https")
	}
	return s.Save(ctx, u.String())
}
