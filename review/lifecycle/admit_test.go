package lifecycle

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mergeguard/mergeguard/config"
)

// fakeUsage is the store's pauses and spending.
type fakeUsage struct {
	PausedValue bool
	PausedError error
	Tokens      int
	Cost        float64
	UsageError  error
	Since       time.Time
}

func (u *fakeUsage) Paused(context.Context, string, int) (bool, error) {
	return u.PausedValue, u.PausedError
}

func (u *fakeUsage) InstallationUsageSince(_ context.Context, _ int64, since time.Time) (int, float64, error) {
	u.Since = since
	return u.Tokens, u.Cost, u.UsageError
}

// TestAdmit: a pause stops automatic runs only; an installation at its
// daily token or cost budget is skipped and told, counted from 00:00 UTC.
func TestAdmit(t *testing.T) {
	t.Parallel()
	budgets := config.Budgets{InstallationDailyMaxTokens: 1000, InstallationDailyMaxCost: 2}
	broken := errors.New("broken")
	tests := map[string]struct {
		usage     fakeUsage
		budgets   config.Budgets
		automatic bool
		skip      string
		notice    bool
		wantErr   error
	}{
		"paused, automatic: skipped": {usage: fakeUsage{PausedValue: true}, automatic: true,
			skip: "automatic reviews are paused on this pull request (/mergeguard resume restarts them)"},
		"paused, asked for: admitted":      {usage: fakeUsage{PausedValue: true}},
		"the pause cannot be read: fails":  {usage: fakeUsage{PausedError: broken}, automatic: true, wantErr: broken},
		"no budget: admitted, not counted": {usage: fakeUsage{Tokens: 1 << 30, UsageError: broken}},
		"under budget: admitted":           {usage: fakeUsage{Tokens: 999, Cost: 1.99}, budgets: budgets},
		"at the token budget: skipped, told": {usage: fakeUsage{Tokens: 1000}, budgets: budgets, notice: true,
			skip: "this installation used its daily budget of 1000 tokens; reviews resume at 00:00 UTC"},
		"at the cost budget: skipped, told": {usage: fakeUsage{Cost: 2}, budgets: budgets, notice: true,
			skip: "this installation used its daily budget of $2.00; reviews resume at 00:00 UTC"},
		"spending cannot be read: fails": {usage: fakeUsage{UsageError: broken}, budgets: budgets, wantErr: broken},
	}
	now := time.Date(2026, 11, 28, 22, 30, 0, 0, time.FixedZone("CET", 3600))
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			a := Admitting{Usage: &tt.usage, Budgets: tt.budgets, Now: func() time.Time { return now }}
			got, err := a.Admit(context.Background(), PullRequest{Repository: "o/r", Number: 7}, 42, tt.automatic)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Admit error = %v, want %v", err, tt.wantErr)
			}
			if got.Skip != tt.skip || (got.Notice != "") != tt.notice {
				t.Errorf("Admit = %+v, want skip %q, a notice %v", got, tt.skip, tt.notice)
			}
			if day := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC); !tt.usage.Since.IsZero() && !tt.usage.Since.Equal(day) {
				t.Errorf("spending counted since %v, want %v", tt.usage.Since, day)
			}
		})
	}
}
