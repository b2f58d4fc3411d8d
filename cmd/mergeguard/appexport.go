package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/mergeguard/mergeguard/config"
)

// runApp is `mergeguard app export [--one-line]`: it prints the GitHub
// App that /setup stored as environment lines, to move it to a secret
// manager.
func runApp(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("app", stderr)
	configPath := configFlag(fs)
	oneLine := fs.Bool("one-line", false, `write the private key on one line, its line breaks as \n (for .env files and platforms without multi-line values)`)
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 || rest[0] != "export" {
		return usageError{errors.New("app: the only action is export")}
	}
	cfg, err := loadConfig(*configPath, getenv, config.RequireDatabase)
	if err != nil {
		return fmt.Errorf("app export: %w", err)
	}
	if !cfg.Database.SecretKey.IsSet() {
		return errors.New("app export: MERGEGUARD_SECRET_KEY is not set: it is needed to decrypt the stored GitHub App (use the value `mergeguard serve` runs with)")
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		return fmt.Errorf("app export: %w", err)
	}
	defer st.Close()
	app, ok, err := st.AppCredentials(ctx)
	if err != nil {
		return fmt.Errorf("app export: %w", err)
	}
	if !ok {
		return errors.New("app export: no GitHub App is stored in this database: create one at /setup first")
	}
	key := app.PrivateKey.Value()
	if *oneLine {
		key = strings.ReplaceAll(strings.TrimRight(key, "\n"), "\n", `\n`)
	}
	lines := [][2]string{
		{"GITHUB_APP_INTEGRATION_ID", strconv.FormatInt(app.AppID, 10)},
		{"GITHUB_APP_WEBHOOK_SECRET", app.WebhookSecret.Value()},
		{"GITHUB_APP_PRIVATE_KEY", key},
		{"GITHUB_OAUTH_CLIENT_ID", app.ClientID},
		{"GITHUB_OAUTH_CLIENT_SECRET", app.ClientSecret.Value()},
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# GitHub App %s (%s), created at /setup\n", app.Slug, app.HTMLURL)
	for _, l := range lines {
		fmt.Fprintf(&b, "%s=%s\n", l[0], shellQuote(l[1]))
	}
	_, err = io.WriteString(stdout, b.String())
	return err
}

// shellQuote quotes s for sh and .env files: in single quotes, each
// single quote inside closing the quotes, escaped, and reopening them.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
