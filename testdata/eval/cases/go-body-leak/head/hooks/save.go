package hooks

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
)

// Store saves webhook URLs.
type Store interface {
	Save(ctx context.Context, u string) error
}

// Save validates, pings and saves a webhook URL.
func Save(ctx context.Context, s Store, client *http.Client, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" {
		return errors.New("webhook URL must be https")
	}
	if err := ping(ctx, client, u.String()); err != nil {
		return err
	}
	return s.Save(ctx, u.String())
}

// ping sends an empty POST and wants a 2xx answer.
func ping(ctx context.Context, client *http.Client, u string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("ping %s: %w", u, err)
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("ping %s: status %d", u, resp.StatusCode)
	}
	return nil
}
