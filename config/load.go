package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// Load builds the configuration: Default, then the YAML file at path, then
// the environment variables of EnvVars read through getenv (an empty value
// counts as unset). With path "" it reads DefaultPath if that file exists
// and no file otherwise. A private key file is read into
// GitHub.App.PrivateKey.
//
// Load fails when the file cannot be read or does not decode: every unknown
// key and every value of the wrong type is reported, each as a *LineError
// naming the file, the line and the key. Problems with the environment
// (an integer variable that is not a number) and with the private key file
// do not fail Load; Validate reports them with every other problem.
func Load(path string, getenv func(string) string) (Config, error) {
	cfg := Default()
	if path == "" {
		if _, err := os.Stat(DefaultPath); err == nil {
			path = DefaultPath
		}
	}
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return Config{}, fmt.Errorf("read config: %w", err)
		}
		if _, err := decodeYAML(path, data, &cfg); err != nil {
			return Config{}, err
		}
	}

	for _, v := range EnvVars() {
		if val := getenv(v.Name); val != "" {
			if err := v.set(&cfg, val); err != nil {
				cfg.problems = append(cfg.problems, fmt.Errorf("%s: %w", v.Name, err))
			}
		}
	}
	cfg.loadPrivateKey(getenv(envPrivateKey) != "", getenv(envPrivateKeyFile) != "")
	return cfg, nil
}

// loadPrivateKey settles which of the inline key and the key file is used,
// letting the environment override the file, and reads the key file.
func (c *Config) loadPrivateKey(keyFromEnv, fileFromEnv bool) {
	app := &c.GitHub.App
	switch {
	case keyFromEnv && !fileFromEnv:
		app.PrivateKeyFile = ""
	case fileFromEnv && !keyFromEnv:
		app.PrivateKey = ""
	}
	if app.PrivateKeyFile == "" {
		return
	}
	if app.PrivateKey.IsSet() {
		c.problems = append(c.problems, fmt.Errorf(
			"github.app: set private_key (%s) or private_key_file (%s), not both", envPrivateKey, envPrivateKeyFile))
		app.PrivateKey = "" // reported once, here
		return
	}
	data, err := os.ReadFile(app.PrivateKeyFile)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		c.problems = append(c.problems, fmt.Errorf("github.app.private_key_file: cannot read %q: %w", app.PrivateKeyFile, err))
		return
	}
	if strings.TrimSpace(string(data)) == "" {
		c.problems = append(c.problems, fmt.Errorf("github.app.private_key_file: %q is empty", app.PrivateKeyFile))
		return
	}
	app.PrivateKey = Secret(data)
}

// Environment variable names that Load treats specially.
const (
	envPrivateKey     = "GITHUB_APP_PRIVATE_KEY"
	envPrivateKeyFile = "MERGEGUARD_GITHUB_PRIVATE_KEY_FILE"
)

// EnvVar is an environment variable that overrides a configuration key.
type EnvVar struct {
	// Name is the variable's name, e.g. "DATABASE_URL".
	Name string
	// Key is the configuration key it overrides, e.g. "database.url".
	Key string
	set func(c *Config, v string) error
}

// EnvVars returns the environment variables Load reads, in the order it
// applies them. The names without the MERGEGUARD_ prefix are those of
// go-githubapp and the OpenAI clients.
func EnvVars() []EnvVar {
	return []EnvVar{
		{"DATABASE_URL", "database.url", func(c *Config, v string) error { c.Database.URL = Secret(v); return nil }},
		{"MERGEGUARD_MIGRATE", "database.migrate", func(c *Config, v string) error { return parseBool(v, &c.Database.Migrate) }},
		{"MERGEGUARD_SECRET_KEY", "database.secret_key", func(c *Config, v string) error { c.Database.SecretKey = Secret(v); return nil }},
		{"GITHUB_WEB_URL", "github.web_url", func(c *Config, v string) error { c.GitHub.WebURL = v; return nil }},
		{"GITHUB_V3_API_URL", "github.v3_api_url", func(c *Config, v string) error { c.GitHub.V3APIURL = v; return nil }},
		{"GITHUB_V4_API_URL", "github.v4_api_url", func(c *Config, v string) error { c.GitHub.V4APIURL = v; return nil }},
		{"GITHUB_APP_INTEGRATION_ID", "github.app.integration_id", func(c *Config, v string) error {
			return parseInt(v, &c.GitHub.App.IntegrationID)
		}},
		{"GITHUB_APP_WEBHOOK_SECRET", "github.app.webhook_secret", func(c *Config, v string) error {
			c.GitHub.App.WebhookSecret = Secret(v)
			return nil
		}},
		{envPrivateKey, "github.app.private_key", func(c *Config, v string) error {
			// Platforms that cannot hold multi-line values pass "\n" escapes.
			if !strings.Contains(v, "\n") {
				v = strings.ReplaceAll(v, `\n`, "\n")
			}
			c.GitHub.App.PrivateKey = Secret(v)
			return nil
		}},
		{envPrivateKeyFile, "github.app.private_key_file", func(c *Config, v string) error {
			c.GitHub.App.PrivateKeyFile = v
			return nil
		}},
		{"GITHUB_OAUTH_CLIENT_ID", "github.oauth.client_id", func(c *Config, v string) error { c.GitHub.OAuth.ClientID = v; return nil }},
		{"GITHUB_OAUTH_CLIENT_SECRET", "github.oauth.client_secret", func(c *Config, v string) error {
			c.GitHub.OAuth.ClientSecret = Secret(v)
			return nil
		}},
		{"OPENAI_BASE_URL", "llm.base_url", func(c *Config, v string) error { c.LLM.BaseURL = v; return nil }},
		{"OPENAI_API_KEY", "llm.api_key", func(c *Config, v string) error { c.LLM.APIKey = Secret(v); return nil }},
		{"MERGEGUARD_MODEL", "llm.model", func(c *Config, v string) error { c.LLM.Model = v; return nil }},
		{"MERGEGUARD_LLM_CONCURRENCY", "llm.concurrency", func(c *Config, v string) error {
			return parseInt(v, &c.LLM.Concurrency)
		}},
		{"MERGEGUARD_ADDR", "server.addr", func(c *Config, v string) error { c.Server.Addr = v; return nil }},
		{"MERGEGUARD_PUBLIC_URL", "server.public_url", func(c *Config, v string) error { c.Server.PublicURL = v; return nil }},
		{"MERGEGUARD_API_TOKEN", "api.token", func(c *Config, v string) error { c.API.Token = Secret(v); return nil }},
		{"MERGEGUARD_WORKERS", "workers.concurrency", func(c *Config, v string) error {
			return parseInt(v, &c.Workers.Concurrency)
		}},
		{"MERGEGUARD_LOG_LEVEL", "log.level", func(c *Config, v string) error { c.Log.Level = v; return nil }},
		{"MERGEGUARD_LOG_FORMAT", "log.format", func(c *Config, v string) error { c.Log.Format = v; return nil }},
	}
}

// parseBool parses v as a boolean (true, false, 1, 0, t, f, in any case)
// into dst.
func parseBool(v string, dst *bool) error {
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	if err != nil {
		return fmt.Errorf("%q is not a boolean (true or false)", v)
	}
	*dst = b
	return nil
}

// parseInt parses v as a base-10 integer into dst.
func parseInt[T int | int64](v string, dst *T) error {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || int64(T(n)) != n {
		return fmt.Errorf("%q is not an integer", v)
	}
	*dst = T(n)
	return nil
}
