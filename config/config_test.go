package config_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"gopkg.in/yaml.v3"

	"github.com/mergeguard/mergeguard/config"
)

// env returns a getenv over m.
func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// writeFile writes data to name in a fresh temporary directory.
func writeFile(t *testing.T, name, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// errLines splits a joined error into its lines; nil gives none.
func errLines(err error) []string {
	if err == nil {
		return nil
	}
	return strings.Split(err.Error(), "\n")
}

// rsaKeyPEM returns a fresh RSA private key in PKCS#1 PEM form.
func rsaKeyPEM(t *testing.T) string {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
}

func mustEd25519(t *testing.T) ed25519.PrivateKey {
	t.Helper()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

var cmpConfig = cmp.AllowUnexported(config.Config{})

func TestLoadDefaults(t *testing.T) {
	// The test runs in config/, where config/mergeguard.yml does not exist.
	got, err := config.Load("", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(config.Default(), got, cmpConfig); diff != "" {
		t.Errorf("Load with no file and no environment (-want +got):\n%s", diff)
	}
	if err := got.Validate(); err != nil {
		t.Errorf("defaults do not validate: %v", err)
	}
	want := config.Default()
	if want.Server.Addr != ":8080" || want.LLM.ContextTokens != 128000 || want.Workers.Concurrency != 2 ||
		want.Workers.Lease != 2*time.Minute || want.Workers.MaxAttempts != 3 ||
		want.GitHub.V3APIURL != "https://api.github.com/" || want.GitHub.V4APIURL != "https://api.github.com/graphql" {
		t.Errorf("a documented default changed: %+v", want)
	}
}

func TestLoadEnvOverrides(t *testing.T) {
	key := rsaKeyPEM(t)
	tests := []struct {
		name string
		file string
		env  map[string]string
		want func(c *config.Config)
	}{
		{
			name: "contract variables",
			env: map[string]string{
				"DATABASE_URL":              "postgres://db/mergeguard",
				"GITHUB_APP_INTEGRATION_ID": "12345",
				"GITHUB_APP_WEBHOOK_SECRET": "hook-secret",
				"GITHUB_APP_PRIVATE_KEY":    key,
				"GITHUB_V3_API_URL":         "https://ghe.example.com/api/v3/",
				"GITHUB_V4_API_URL":         "https://ghe.example.com/api/graphql",
				"OPENAI_API_KEY":            "sk-test",
				"OPENAI_BASE_URL":           "http://127.0.0.1:11434/v1",
				"MERGEGUARD_MODEL":          "llama3",
				"MERGEGUARD_ADDR":           "127.0.0.1:9000",
				"MERGEGUARD_API_TOKEN":      "api-token",
			},
			want: func(c *config.Config) {
				c.Database.URL = "postgres://db/mergeguard"
				c.GitHub.App.IntegrationID = 12345
				c.GitHub.App.WebhookSecret = "hook-secret"
				c.GitHub.App.PrivateKey = config.Secret(key)
				c.GitHub.V3APIURL = "https://ghe.example.com/api/v3/"
				c.GitHub.V4APIURL = "https://ghe.example.com/api/graphql"
				c.LLM.APIKey = "sk-test"
				c.LLM.BaseURL = "http://127.0.0.1:11434/v1"
				c.LLM.Model = "llama3"
				c.Server.Addr = "127.0.0.1:9000"
				c.API.Token = "api-token"
			},
		},
		{
			name: "extra variables",
			env: map[string]string{
				"GITHUB_WEB_URL":             "https://ghe.example.com/",
				"MERGEGUARD_PUBLIC_URL":      "https://mergeguard.example.com",
				"MERGEGUARD_WORKERS":         " 5 ",
				"MERGEGUARD_LLM_CONCURRENCY": "8",
				"MERGEGUARD_LOG_LEVEL":       "debug",
				"MERGEGUARD_LOG_FORMAT":      "console",
			},
			want: func(c *config.Config) {
				c.GitHub.WebURL = "https://ghe.example.com/"
				c.Server.PublicURL = "https://mergeguard.example.com"
				c.Workers.Concurrency = 5
				c.LLM.Concurrency = 8
				c.Log.Level = "debug"
				c.Log.Format = "console"
			},
		},
		{
			name: "environment beats file",
			file: "server:\n  addr: \":7000\"\nllm:\n  model: from-file\nworkers:\n  concurrency: 9\n",
			env:  map[string]string{"MERGEGUARD_ADDR": ":7001", "MERGEGUARD_WORKERS": "1"},
			want: func(c *config.Config) {
				c.Server.Addr = ":7001"
				c.LLM.Model = "from-file"
				c.Workers.Concurrency = 1
			},
		},
		{
			name: "migrations at start: on by default, off from the file",
			file: "database:\n  url: postgres://db/x\n  migrate: false\n",
			want: func(c *config.Config) {
				c.Database.URL = "postgres://db/x"
				c.Database.Migrate = false
			},
		},
		{
			name: "migrations at start: the environment turns them off",
			env:  map[string]string{"MERGEGUARD_MIGRATE": " FALSE "},
			want: func(c *config.Config) { c.Database.Migrate = false },
		},
		{
			name: "migrations at start: the environment beats the file",
			file: "database:\n  migrate: false\n",
			env:  map[string]string{"MERGEGUARD_MIGRATE": "1"},
			want: func(c *config.Config) { c.Database.Migrate = true },
		},
		{
			name: "migrations at start: a file without the key keeps the default",
			file: "database:\n  url: postgres://db/x\n",
			want: func(c *config.Config) { c.Database.URL = "postgres://db/x" },
		},
		{
			name: "empty variable counts as unset",
			file: "server:\n  addr: \":7000\"\n",
			env:  map[string]string{"MERGEGUARD_ADDR": ""},
			want: func(c *config.Config) { c.Server.Addr = ":7000" },
		},
		{
			name: "escaped newlines in the private key",
			env:  map[string]string{"GITHUB_APP_PRIVATE_KEY": strings.ReplaceAll(key, "\n", `\n`)},
			want: func(c *config.Config) { c.GitHub.App.PrivateKey = config.Secret(key) },
		},
		{
			name: "key in the environment replaces a key file in the file",
			file: "github:\n  app:\n    private_key_file: /nonexistent/key.pem\n",
			env:  map[string]string{"GITHUB_APP_PRIVATE_KEY": key},
			want: func(c *config.Config) { c.GitHub.App.PrivateKey = config.Secret(key) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := ""
			if tt.file != "" {
				path = writeFile(t, "mergeguard.yml", tt.file)
			}
			got, err := config.Load(path, env(tt.env))
			if err != nil {
				t.Fatal(err)
			}
			want := config.Default()
			tt.want(&want)
			if diff := cmp.Diff(want, got, cmpConfig); diff != "" {
				t.Errorf("Load (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadFile(t *testing.T) {
	file := `
server:
  addr: "127.0.0.1:8081"
  shutdown_timeout: 5s
llm:
  temperature: 0
  prices:
    my-model: {input_per_million: 1, output_per_million: 2.5}
    gpt-4o: {input_per_million: 3}
review:
  focus_areas: [security]
  path_filters: ["!**/*.lock"]
budgets:
  installation_daily_max_cost: 12.5
`
	got, err := config.Load(writeFile(t, "mergeguard.yml", file), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := config.Default()
	want.Server.Addr = "127.0.0.1:8081"
	want.Server.ShutdownTimeout = 5 * time.Second
	want.LLM.Temperature = 0
	want.LLM.Prices["my-model"] = config.Price{InputPerMillion: 1, OutputPerMillion: 2.5}
	want.LLM.Prices["gpt-4o"] = config.Price{InputPerMillion: 3}
	want.Review.FocusAreas = []string{"security"}
	want.Review.PathFilters = []string{"!**/*.lock"}
	want.Budgets.InstallationDailyMaxCost = 12.5
	if diff := cmp.Diff(want, got, cmpConfig); diff != "" {
		t.Errorf("Load (-want +got):\n%s", diff)
	}
}

func TestLoadPrivateKeyFile(t *testing.T) {
	key := rsaKeyPEM(t)
	path := writeFile(t, "app.pem", key)
	got, err := config.Load("", env(map[string]string{
		"GITHUB_APP_INTEGRATION_ID":          "7",
		"GITHUB_APP_WEBHOOK_SECRET":          "s",
		"MERGEGUARD_GITHUB_PRIVATE_KEY_FILE": path,
	}))
	if err != nil {
		t.Fatal(err)
	}
	if got.GitHub.App.PrivateKey.Value() != key {
		t.Errorf("PrivateKey was not read from %s", path)
	}
	if err := got.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

func TestLoadFileErrors(t *testing.T) {
	tests := []struct {
		name string
		file string
		want []string // after the file's path
	}{
		{
			name: "unknown keys at every depth",
			file: "server:\n  adr: \":1\"\nllm:\n  prices:\n    m: {input: 1}\nreveiw: {}\n",
			want: []string{
				`:2: unknown key "server.adr"`,
				`:5: unknown key "llm.prices.m.input"`,
				`:6: unknown key "reveiw"`,
			},
		},
		{
			name: "wrong types",
			file: "server:\n  read_timeout: 30\n  idle_timeout: soon\nworkers:\n  concurrency: two\n  max_attempts: 1.5\nllm:\n  temperature: hot\nreview:\n  include_style: yes\n  path_filters: \"*.go\"\ndatabase: [x]\n",
			want: []string{
				`:2: server.read_timeout: 30 needs a unit, such as 30s`,
				`:3: server.idle_timeout: "soon" is not a duration such as 30s or 2m`,
				`:5: workers.concurrency: "two" is not an integer`,
				`:6: workers.max_attempts: "1.5" is not an integer`,
				`:8: llm.temperature: "hot" is not a number`,
				`:10: review.include_style: "yes" is not true or false`,
				`:11: review.path_filters: must be a list, not a single value`,
				`:12: database: must be a mapping of keys to values, not a list`,
			},
		},
		{
			name: "not a mapping",
			file: "- a\n- b\n",
			want: []string{`:1: must be a mapping of keys to values, not a list`},
		},
		{
			name: "aliases",
			file: "server:\n  addr: &a \":1\"\nllm:\n  model: *a\n",
			want: []string{`:4: llm.model: YAML aliases (*a) are not supported`},
		},
		{
			name: "two documents",
			file: "server: {}\n---\nserver: {}\n",
			want: []string{`:2: only one YAML document is allowed`},
		},
		{
			name: "syntax error",
			file: "server:\n  addr: [\n",
			want: []string{`:2: did not find expected node content`},
		},
		{
			name: "duplicate key",
			file: "server:\n  addr: a\n  addr: b\n",
			want: []string{`:3: mapping key "addr" already defined at line 2`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, "mergeguard.yml", tt.file)
			_, err := config.Load(path, env(nil))
			var want []string
			for _, w := range tt.want {
				want = append(want, path+w)
			}
			if diff := cmp.Diff(want, errLines(err)); diff != "" {
				t.Errorf("Load error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope.yml")
	_, err := config.Load(path, env(nil))
	want := "read config: open " + path + ": no such file or directory"
	if err == nil || err.Error() != want {
		t.Errorf("Load(%q) error = %v, want %q", path, err, want)
	}
}

func TestValidate(t *testing.T) {
	key := rsaKeyPEM(t)
	ecKey := func() string {
		// A PKCS#8 key that is not RSA.
		b, err := x509.MarshalPKCS8PrivateKey(mustEd25519(t))
		if err != nil {
			t.Fatal(err)
		}
		return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: b}))
	}()
	missing := filepath.Join(t.TempDir(), "missing.pem")
	notPEM := writeFile(t, "key.pem", "this is not a key\n")
	empty := writeFile(t, "empty.pem", "\n")

	tests := []struct {
		name string
		file string
		env  map[string]string
		reqs []config.Requirement
		want []string
	}{
		{
			name: "valid without GitHub",
			env:  map[string]string{"DATABASE_URL": "postgres://localhost/db"},
			reqs: []config.Requirement{config.RequireDatabase},
		},
		{
			name: "valid with GitHub",
			env: map[string]string{
				"GITHUB_APP_INTEGRATION_ID": "1", "GITHUB_APP_WEBHOOK_SECRET": "s", "GITHUB_APP_PRIVATE_KEY": key,
			},
		},
		{
			name: "write interval out of range",
			file: "github:\n  min_write_interval: 2m\n",
			want: []string{"github.min_write_interval: must be from 0s to 1m, got 2m0s"},
		},
		{
			name: "no write interval (a fake GitHub)",
			file: "github:\n  min_write_interval: 0s\n",
		},
		{
			name: "retries out of range",
			file: "github:\n  max_retries: 11\n  retry_backoff: -1s\n  retry_max_wait: 2h\n",
			want: []string{
				"github.max_retries: must be from 0 to 10, got 11",
				"github.retry_backoff: must be from 0s to 1m, got -1s",
				"github.retry_max_wait: must be from 0s to 1h, got 2h0m0s",
			},
		},
		{
			name: "no retries",
			file: "github:\n  max_retries: 0\n  retry_backoff: 0s\n  retry_max_wait: 0s\n",
		},
		{
			name: "database required",
			reqs: []config.Requirement{config.RequireDatabase},
			want: []string{"database.url: required by this command (set DATABASE_URL)"},
		},
		{
			name: "bad integer variables",
			env:  map[string]string{"GITHUB_APP_INTEGRATION_ID": "abc", "MERGEGUARD_WORKERS": "2.5"},
			want: []string{
				`GITHUB_APP_INTEGRATION_ID: "abc" is not an integer`,
				`MERGEGUARD_WORKERS: "2.5" is not an integer`,
			},
		},
		{
			name: "bad boolean variable",
			env:  map[string]string{"MERGEGUARD_MIGRATE": "no"},
			want: []string{`MERGEGUARD_MIGRATE: "no" is not a boolean (true or false)`},
		},
		{
			name: "GitHub App half configured",
			env:  map[string]string{"GITHUB_APP_INTEGRATION_ID": "42"},
			want: []string{
				"github.app.webhook_secret: required when the GitHub App is configured (set GITHUB_APP_WEBHOOK_SECRET)",
				"github.app.private_key: required when the GitHub App is configured (set GITHUB_APP_PRIVATE_KEY or MERGEGUARD_GITHUB_PRIVATE_KEY_FILE)",
			},
		},
		{
			name: "webhook secret empty while the App is configured",
			env:  map[string]string{"GITHUB_APP_INTEGRATION_ID": "42", "GITHUB_APP_PRIVATE_KEY": key},
			want: []string{"github.app.webhook_secret: required when the GitHub App is configured (set GITHUB_APP_WEBHOOK_SECRET)"},
		},
		{
			name: "only a secret",
			env:  map[string]string{"GITHUB_APP_WEBHOOK_SECRET": "s", "GITHUB_APP_PRIVATE_KEY": key},
			want: []string{"github.app.integration_id: required when the GitHub App is configured (set GITHUB_APP_INTEGRATION_ID)"},
		},
		{
			name: "missing private key file",
			env: map[string]string{
				"GITHUB_APP_INTEGRATION_ID": "1", "GITHUB_APP_WEBHOOK_SECRET": "s", "MERGEGUARD_GITHUB_PRIVATE_KEY_FILE": missing,
			},
			want: []string{fmt.Sprintf("github.app.private_key_file: cannot read %q: no such file or directory", missing)},
		},
		{
			name: "empty private key file",
			env: map[string]string{
				"GITHUB_APP_INTEGRATION_ID": "1", "GITHUB_APP_WEBHOOK_SECRET": "s", "MERGEGUARD_GITHUB_PRIVATE_KEY_FILE": empty,
			},
			want: []string{fmt.Sprintf("github.app.private_key_file: %q is empty", empty)},
		},
		{
			name: "private key file not PEM",
			env: map[string]string{
				"GITHUB_APP_INTEGRATION_ID": "1", "GITHUB_APP_WEBHOOK_SECRET": "s", "MERGEGUARD_GITHUB_PRIVATE_KEY_FILE": notPEM,
			},
			want: []string{fmt.Sprintf(`github.app.private_key_file %q: not a PEM-encoded private key (expected "-----BEGIN RSA PRIVATE KEY-----")`, notPEM)},
		},
		{
			name: "private key not PEM",
			env:  map[string]string{"GITHUB_APP_INTEGRATION_ID": "1", "GITHUB_APP_WEBHOOK_SECRET": "s", "GITHUB_APP_PRIVATE_KEY": "abc"},
			want: []string{`github.app.private_key: not a PEM-encoded private key (expected "-----BEGIN RSA PRIVATE KEY-----")`},
		},
		{
			name: "private key not RSA",
			env:  map[string]string{"GITHUB_APP_INTEGRATION_ID": "1", "GITHUB_APP_WEBHOOK_SECRET": "s", "GITHUB_APP_PRIVATE_KEY": ecKey},
			want: []string{"github.app.private_key: the private key is a ed25519.PrivateKey, GitHub Apps use RSA keys"},
		},
		{
			name: "certificate instead of key",
			env: map[string]string{
				"GITHUB_APP_INTEGRATION_ID": "1", "GITHUB_APP_WEBHOOK_SECRET": "s",
				"GITHUB_APP_PRIVATE_KEY": "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
			},
			want: []string{`github.app.private_key: PEM block "CERTIFICATE" is not a private key`},
		},
		{
			name: "key and key file both in the file",
			file: "github:\n  app:\n    private_key: abc\n    private_key_file: /x.pem\n",
			env:  map[string]string{"GITHUB_APP_INTEGRATION_ID": "1", "GITHUB_APP_WEBHOOK_SECRET": "s"},
			want: []string{
				"github.app: set private_key (GITHUB_APP_PRIVATE_KEY) or private_key_file (MERGEGUARD_GITHUB_PRIVATE_KEY_FILE), not both",
			},
		},
		{
			name: "negative concurrency",
			env:  map[string]string{"MERGEGUARD_WORKERS": "-1", "MERGEGUARD_LLM_CONCURRENCY": "-2"},
			want: []string{
				"llm.concurrency: must be at least 1, got -2",
				"workers.concurrency: must not be negative (0 runs no workers), got -1",
			},
		},
		{
			name: "experiments valid",
			file: "llm:\n  experiments:\n    - {name: gpt-4o, model: gpt-4o, share: 0.25}\n" +
				"    - {name: focused.v1, model: gpt-4o-mini, prompt: focused, share: 0.75}\n",
		},
		{
			name: "experiments invalid",
			file: "llm:\n  experiments:\n" +
				"    - {name: a, model: gpt-4o, share: 0.6}\n" +
				"    - {name: a, model: gpt-4.1, share: 0.5}\n" +
				"    - {name: default, model: x, share: 0}\n" +
				"    - {name: \"B/../x\", model: \" \", prompt: louder, share: 1.5}\n" +
				"    - {name: \"\", model: " + strings.Repeat("m", 81) + "}\n",
			want: []string{
				`llm.experiments[1].name: "a" is the name of another experiment`,
				`llm.experiments[2].name: "default" names the default arm (llm.model)`,
				`llm.experiments[3].name: must be 1 to 32 lowercase letters, digits, '-', '_' or '.', got "B/../x"`,
				"llm.experiments[3].model: must not be empty",
				`llm.experiments[3].prompt: "louder" is not one of focused`,
				"llm.experiments[3].share: must be between 0 and 1, got 1.5",
				`llm.experiments[4].name: must be 1 to 32 lowercase letters, digits, '-', '_' or '.', got ""`,
				"llm.experiments[4].model: must be at most 80 bytes, got 81",
				"llm.experiments: the shares must sum to at most 1, got 1.1",
			},
		},
		{
			name: "bad URLs and log settings",
			env: map[string]string{
				"OPENAI_BASE_URL": "localhost:11434", "GITHUB_V3_API_URL": "ftp://x/", "MERGEGUARD_PUBLIC_URL": "/relative",
				"MERGEGUARD_LOG_LEVEL": "verbose", "MERGEGUARD_LOG_FORMAT": "xml",
			},
			want: []string{
				`server.public_url: "/relative" is not an absolute http(s) URL`,
				`github.v3_api_url: "ftp://x/" is not an absolute http(s) URL`,
				`llm.base_url: "localhost:11434" is not an absolute http(s) URL`,
				`log.level: "verbose" is not one of trace, debug, info, warn, error`,
				`log.format: "xml" is not one of auto, json, console`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := ""
			if tt.file != "" {
				path = writeFile(t, "mergeguard.yml", tt.file)
			}
			cfg, err := config.Load(path, env(tt.env))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, errLines(cfg.Validate(tt.reqs...))); diff != "" {
				t.Errorf("Validate (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateAllProblemsAtOnce(t *testing.T) {
	file := `
server:
  addr: ""
  read_header_timeout: 0s
  write_timeout: -1s
llm:
  model: ""
  context_tokens: 1000
  max_output_tokens: 1000
  temperature: 2.5
  max_turns: 0
  api_type: bedrock
  response_format: xml
  prices:
    m: {input_per_million: -1, output_per_million: -2}
workers:
  lease: 0s
  max_attempts: 0
review:
  severity_threshold: urgent
  max_files: -3
budgets:
  review_max_tokens: -1
  installation_daily_max_cost: -0.5
memory:
  dismissals: 0
`
	cfg, err := config.Load(writeFile(t, "mergeguard.yml", file), env(map[string]string{
		"GITHUB_APP_INTEGRATION_ID": "x",
		"GITHUB_APP_WEBHOOK_SECRET": "s",
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`GITHUB_APP_INTEGRATION_ID: "x" is not an integer`,
		"server.addr: must not be empty (set MERGEGUARD_ADDR)",
		"server.read_header_timeout: must be positive, got 0s",
		"server.write_timeout: must not be negative (0 means no limit), got -1s",
		"database.url: required by this command (set DATABASE_URL)",
		"github.app.integration_id: required when the GitHub App is configured (set GITHUB_APP_INTEGRATION_ID)",
		"github.app.private_key: required when the GitHub App is configured (set GITHUB_APP_PRIVATE_KEY or MERGEGUARD_GITHUB_PRIVATE_KEY_FILE)",
		"llm.model: must not be empty (set MERGEGUARD_MODEL)",
		"llm.max_output_tokens: must be less than llm.context_tokens (1000), got 1000",
		"llm.temperature: must be between 0 and 2, got 2.5",
		"llm.max_turns: must be at least 1, got 0",
		`llm.api_type: "bedrock" is not one of openai, azure`,
		`llm.response_format: "xml" is not one of json_schema, json_object, text`,
		"llm.prices.m.input_per_million: must not be negative, got -1",
		"llm.prices.m.output_per_million: must not be negative, got -2",
		"workers.lease: must be positive, got 0s",
		"workers.max_attempts: must be at least 1, got 0",
		"budgets.review_max_tokens: must not be negative (0 means unlimited), got -1",
		"budgets.installation_daily_max_cost: must not be negative (0 means unlimited), got -0.5",
		"memory.dismissals: must be between 1 and 10000, got 0",
		`review.severity_threshold: "urgent" is not one of critical, warning, info, style`,
		"review.max_files: must not be negative (0 means no limit), got -3",
	}
	if diff := cmp.Diff(want, errLines(cfg.Validate(config.RequireDatabase))); diff != "" {
		t.Errorf("Validate (-want +got):\n%s", diff)
	}
}

func TestExampleFileValidates(t *testing.T) {
	cfg, err := config.Load("mergeguard.example.yml", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("the example configuration does not validate:\n%v", err)
	}
	// The example documents the defaults: loading it changes nothing.
	if diff := cmp.Diff(config.Default(), cfg, cmpConfig, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("example differs from Default (-default +example):\n%s", diff)
	}
}

func TestSecretsNeverPrint(t *testing.T) {
	key := rsaKeyPEM(t)
	secrets := map[string]string{
		"DATABASE_URL":              "postgres://user:db-password@localhost/db",
		"GITHUB_APP_INTEGRATION_ID": "1",
		"GITHUB_APP_WEBHOOK_SECRET": "hook-secret-value",
		"GITHUB_APP_PRIVATE_KEY":    key,
		"OPENAI_API_KEY":            "sk-secret-value",
		"MERGEGUARD_API_TOKEN":      "api-token-value",
		"MERGEGUARD_SECRET_KEY":     "c2VjcmV0LWtleS12YWx1ZS0wMTIzNDU2Nzg5YWJjZGU=",
	}
	cfg, err := config.Load("", env(secrets))
	if err != nil {
		t.Fatal(err)
	}
	jsonOut, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	yamlOut, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	outputs := map[string]string{
		"%v":   fmt.Sprintf("%v", cfg),
		"%+v":  fmt.Sprintf("%+v", cfg),
		"%#v":  fmt.Sprintf("%#v", cfg),
		"%s":   fmt.Sprintf("key=%s", cfg.LLM.APIKey),
		"%q":   fmt.Sprintf("token=%q", cfg.API.Token),
		"%x":   fmt.Sprintf("secret=%x", cfg.GitHub.App.WebhookSecret),
		"json": string(jsonOut),
		"yaml": string(yamlOut),
	}
	for name, out := range outputs {
		for _, s := range []string{"db-password", "hook-secret-value", "PRIVATE KEY", "sk-secret-value", "api-token-value", "c2VjcmV0LWtleS12YWx1ZS0wMTIzNDU2Nzg5YWJjZGU"} {
			if strings.Contains(out, s) {
				t.Errorf("%s output contains the secret %q", name, s)
			}
		}
		if !strings.Contains(out, "[REDACTED]") {
			t.Errorf("%s output does not show [REDACTED]: %s", name, out)
		}
	}
	if cfg.LLM.APIKey.Value() != "sk-secret-value" {
		t.Errorf("Value() = %q, want the secret", cfg.LLM.APIKey.Value())
	}
	if got := fmt.Sprint(config.Secret("")); got != "" {
		t.Errorf("an empty secret prints %q, want empty", got)
	}
}

func TestEnvVarsIncludeTheContract(t *testing.T) {
	contract := []string{
		"DATABASE_URL", "GITHUB_APP_INTEGRATION_ID", "GITHUB_APP_WEBHOOK_SECRET", "GITHUB_APP_PRIVATE_KEY",
		"GITHUB_V3_API_URL", "GITHUB_V4_API_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "MERGEGUARD_MODEL",
		"MERGEGUARD_ADDR", "MERGEGUARD_API_TOKEN",
	}
	have := map[string]bool{}
	for _, v := range config.EnvVars() {
		if have[v.Name] {
			t.Errorf("%s is listed twice", v.Name)
		}
		have[v.Name] = true
	}
	for _, name := range contract {
		if !have[name] {
			t.Errorf("EnvVars lacks the contract variable %s", name)
		}
	}
}

func TestREADMEListsEveryEnvVar(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range config.EnvVars() {
		row := "| `" + v.Name + "` | `" + v.Key + "` |"
		if !strings.Contains(string(readme), row) {
			t.Errorf("README.md has no table row starting %q", row)
		}
	}
}

func TestLLMConfigured(t *testing.T) {
	tests := []struct {
		name    string
		baseURL string
		apiKey  config.Secret
		want    bool
	}{
		{"defaults", config.Default().LLM.BaseURL, "", false},
		{"default URL with a trailing slash", "https://api.openai.com/v1/", "", false},
		{"API key", config.Default().LLM.BaseURL, "sk-test", true},
		{"local server without a key", "http://localhost:11434/v1", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := (config.LLM{BaseURL: tt.baseURL, APIKey: tt.apiKey}).Configured(); got != tt.want {
				t.Errorf("Configured() = %t, want %t", got, tt.want)
			}
		})
	}
}

func TestPriceCost(t *testing.T) {
	p := config.Price{InputPerMillion: 2.5, OutputPerMillion: 10}
	if got, want := p.Cost(1_000_000, 500_000), 7.5; got != want {
		t.Errorf("Cost = %v, want %v", got, want)
	}
}
