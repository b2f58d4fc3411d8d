package config

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Requirement names a part of the configuration that a command cannot run
// without.
type Requirement int

const (
	// RequireDatabase makes database.url (DATABASE_URL) required.
	RequireDatabase Requirement = iota + 1
)

// Validate reports every problem in the configuration at once, joined with
// errors.Join, one line each, naming the key (and the environment variable
// to set where there is one): those Load found in the environment and the
// private key file, invalid values, and parts the given requirements make
// mandatory. The GitHub App is all or nothing: once any of its fields is
// set, all must be. It returns nil for a valid configuration.
func (c Config) Validate(reqs ...Requirement) error {
	v := validation{errs: slices.Clone(c.problems)}

	s := c.Server
	if s.Addr == "" {
		v.add("server.addr", "must not be empty (set MERGEGUARD_ADDR)")
	}
	if s.PublicURL != "" {
		v.url("server.public_url", s.PublicURL)
	}
	positive(&v, "server.read_header_timeout", s.ReadHeaderTimeout)
	noLimit(&v, "server.read_timeout", s.ReadTimeout)
	noLimit(&v, "server.write_timeout", s.WriteTimeout)
	noLimit(&v, "server.idle_timeout", s.IdleTimeout)
	positive(&v, "server.shutdown_timeout", s.ShutdownTimeout)

	if slices.Contains(reqs, RequireDatabase) && !c.Database.URL.IsSet() {
		v.add("database.url", "required by this command (set DATABASE_URL)")
	}

	if c.Database.SecretKey.IsSet() {
		if _, err := ParseSecretKey(c.Database.SecretKey.Value()); err != nil {
			v.add("database.secret_key", err.Error()+" (MERGEGUARD_SECRET_KEY)")
		}
	}
	c.GitHub.check(&v)
	c.LLM.check(&v)

	w := c.Workers
	if w.Concurrency < 0 {
		v.add("workers.concurrency", fmt.Sprintf("must not be negative (0 runs no workers), got %d", w.Concurrency))
	}
	positive(&v, "workers.lease", w.Lease)
	positive(&v, "workers.run_timeout", w.RunTimeout)
	positive(&v, "workers.retry_base", w.RetryBase)
	positive(&v, "workers.retry_max", w.RetryMax)

	a := c.API
	atLeastOne(&v, "api.max_concurrent_submissions", a.MaxConcurrentSubmissions)
	atLeastOne(&v, "api.max_streams", a.MaxStreams)
	atLeastOne(&v, "api.max_streams_per_client", a.MaxStreamsPerClient)
	atLeastOne(&v, "api.stream_batch", a.StreamBatch)
	positive(&v, "api.stream_write_timeout", a.StreamWriteTimeout)
	positive(&v, "api.stream_heartbeat", a.StreamHeartbeat)
	positive(&v, "api.stream_poll", a.StreamPoll)
	positive(&v, "workers.poll_interval", w.PollInterval)
	atLeastOne(&v, "workers.max_attempts", w.MaxAttempts)

	b := c.Budgets
	unlimited(&v, "budgets.review_max_tokens", b.ReviewMaxTokens)
	unlimited(&v, "budgets.installation_daily_max_cost", b.InstallationDailyMaxCost)
	unlimited(&v, "budgets.installation_daily_max_tokens", b.InstallationDailyMaxTokens)

	if d := c.Memory.Dismissals; d < 1 || d > MaxMemoryDismissals {
		v.add("memory.dismissals", fmt.Sprintf("must be between 1 and %d, got %d", MaxMemoryDismissals, d))
	}

	oneOf(v.add, "log.level", c.Log.Level, []string{"trace", "debug", "info", "warn", "error"})
	oneOf(v.add, "log.format", c.Log.Format, []string{"auto", "json", "console"})

	c.Review.check(func(path, msg string) { v.add("review."+path, msg) })
	return errors.Join(v.errs...)
}

func (g GitHub) check(v *validation) {
	v.url("github.web_url", g.WebURL)
	v.url("github.v3_api_url", g.V3APIURL)
	v.url("github.v4_api_url", g.V4APIURL)
	positive(v, "github.timeout", g.Timeout)
	if g.MinWriteInterval < 0 || g.MinWriteInterval > time.Minute {
		v.add("github.min_write_interval", fmt.Sprintf("must be from 0s to 1m, got %s", g.MinWriteInterval))
	}
	if g.MaxRetries < 0 || g.MaxRetries > 10 {
		v.add("github.max_retries", fmt.Sprintf("must be from 0 to 10, got %d", g.MaxRetries))
	}
	if g.RetryBackoff < 0 || g.RetryBackoff > time.Minute {
		v.add("github.retry_backoff", fmt.Sprintf("must be from 0s to 1m, got %s", g.RetryBackoff))
	}
	if g.RetryMaxWait < 0 || g.RetryMaxWait > time.Hour {
		v.add("github.retry_max_wait", fmt.Sprintf("must be from 0s to 1h, got %s", g.RetryMaxWait))
	}
	atLeastOne(v, "github.max_inline_comments", g.MaxInlineComments)
	if g.WebhookBytesInFlight < 1<<20 {
		v.add("github.webhook_bytes_in_flight", fmt.Sprintf("must be at least 1048576 (1 MiB), got %d", g.WebhookBytesInFlight))
	}
	if g.WebhookMinBodyRate < 1<<10 {
		v.add("github.webhook_min_body_rate", fmt.Sprintf("must be at least 1024 (1 KiB/s), got %d", g.WebhookMinBodyRate))
	}
	positive(v, "github.webhook_body_grace", g.WebhookBodyGrace)
	atLeastOne(v, "github.webhook_slow_bodies_per_address", g.WebhookSlowBodiesPerAddress)

	if o := g.OAuth; o.Configured() {
		if o.ClientID == "" {
			v.add("github.oauth.client_id", "required with github.oauth.client_secret (set GITHUB_OAUTH_CLIENT_ID)")
		}
		if !o.ClientSecret.IsSet() {
			v.add("github.oauth.client_secret", "required with github.oauth.client_id (set GITHUB_OAUTH_CLIENT_SECRET)")
		}
	}

	a := g.App
	if a.IntegrationID < 0 {
		v.add("github.app.integration_id", fmt.Sprintf("must be positive, got %d", a.IntegrationID))
	}
	if !a.Configured() {
		return
	}
	const why = "required when the GitHub App is configured"
	if a.IntegrationID == 0 {
		v.add("github.app.integration_id", why+" (set GITHUB_APP_INTEGRATION_ID)")
	}
	if !a.WebhookSecret.IsSet() {
		v.add("github.app.webhook_secret", why+" (set GITHUB_APP_WEBHOOK_SECRET)")
	}
	switch {
	case a.PrivateKey.IsSet():
		if err := checkPrivateKey([]byte(a.PrivateKey.Value())); err != nil {
			key := "github.app.private_key"
			if a.PrivateKeyFile != "" {
				key = fmt.Sprintf("github.app.private_key_file %q", a.PrivateKeyFile)
			}
			v.add(key, err.Error())
		}
	case a.PrivateKeyFile == "": // a key file that could not be read is one of Load's problems
		v.add("github.app.private_key", why+" (set GITHUB_APP_PRIVATE_KEY or MERGEGUARD_GITHUB_PRIVATE_KEY_FILE)")
	}
}

// checkPrivateKey checks that data is a PEM-encoded RSA private key in
// PKCS#1 or PKCS#8 form, as GitHub issues them and ghinstallation reads them.
func checkPrivateKey(data []byte) error {
	block, _ := pem.Decode(data)
	if block == nil {
		return errors.New(`not a PEM-encoded private key (expected "-----BEGIN RSA PRIVATE KEY-----")`)
	}
	switch block.Type {
	case "RSA PRIVATE KEY":
		if _, err := x509.ParsePKCS1PrivateKey(block.Bytes); err != nil {
			return fmt.Errorf("cannot parse the RSA private key: %w", err)
		}
	case "PRIVATE KEY":
		key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return fmt.Errorf("cannot parse the private key: %w", err)
		}
		if _, ok := key.(*rsa.PrivateKey); !ok {
			return fmt.Errorf("the private key is a %T, GitHub Apps use RSA keys", key)
		}
	default:
		return fmt.Errorf("PEM block %q is not a private key", block.Type)
	}
	return nil
}

func (l LLM) check(v *validation) {
	v.url("llm.base_url", l.BaseURL)
	if l.Model == "" {
		v.add("llm.model", "must not be empty (set MERGEGUARD_MODEL)")
	}
	positive(v, "llm.context_tokens", l.ContextTokens)
	positive(v, "llm.max_output_tokens", l.MaxOutputTokens)
	if l.ContextTokens > 0 && l.MaxOutputTokens >= l.ContextTokens {
		v.add("llm.max_output_tokens", fmt.Sprintf("must be less than llm.context_tokens (%d), got %d", l.ContextTokens, l.MaxOutputTokens))
	}
	if l.Temperature < 0 || l.Temperature > 2 {
		v.add("llm.temperature", fmt.Sprintf("must be between 0 and 2, got %g", l.Temperature))
	}
	positive(v, "llm.timeout", l.Timeout)
	positive(v, "llm.retry_base", l.RetryBase)
	positive(v, "llm.retry_max", l.RetryMax)
	if l.RetryMax > 0 && l.RetryMax < l.RetryBase {
		v.add("llm.retry_max", fmt.Sprintf("must be at least llm.retry_base (%s), got %s", l.RetryBase, l.RetryMax))
	}
	atLeastOne(v, "llm.max_turns", l.MaxTurns)
	atLeastOne(v, "llm.max_chunks", l.MaxChunks)
	atLeast(v, "llm.max_chunk_tokens", l.MaxChunkTokens, 256)
	positive(v, "llm.agent_timeout", l.AgentTimeout)
	atLeast(v, "llm.tool_result_bytes", l.ToolResultBytes, 1024)
	atLeastOne(v, "llm.tool_read_lines", l.ToolReadLines)
	atLeastOne(v, "llm.tool_search_files", l.ToolSearchFiles)
	atLeastOne(v, "llm.concurrency", l.Concurrency)
	oneOf(v.add, "llm.api_type", l.APIType, []string{"openai", "azure"})
	oneOf(v.add, "llm.response_format", l.ResponseFormat, []string{"json_schema", "json_object", "text"})
	for _, model := range slices.Sorted(maps.Keys(l.Prices)) {
		p := l.Prices[model]
		if p.InputPerMillion < 0 {
			v.add("llm.prices."+model+".input_per_million", fmt.Sprintf("must not be negative, got %g", p.InputPerMillion))
		}
		if p.OutputPerMillion < 0 {
			v.add("llm.prices."+model+".output_per_million", fmt.Sprintf("must not be negative, got %g", p.OutputPerMillion))
		}
	}
	checkExperiments(v, l.Experiments)
}

// maxArmName bounds an experiment's name (a store column, a label);
// maxArmModel its model's (a finding's source keeps 100 bytes).
const (
	maxArmName  = 32
	maxArmModel = 80
)

// checkExperiments checks llm.experiments: names unique, safe and not the
// default arm's, models set, known prompt variants, shares in [0, 1]
// summing to at most 1.
func checkExperiments(v *validation, arms []Experiment) {
	seen := map[string]bool{}
	sum := 0.0
	for i, a := range arms {
		key := fmt.Sprintf("llm.experiments[%d]", i)
		switch {
		case !safeArmName(a.Name):
			v.add(key+".name", fmt.Sprintf("must be 1 to %d lowercase letters, digits, '-', '_' or '.', got %q", maxArmName, a.Name))
		case a.Name == DefaultArm:
			v.add(key+".name", fmt.Sprintf("%q names the default arm (llm.model)", DefaultArm))
		case seen[a.Name]:
			v.add(key+".name", fmt.Sprintf("%q is the name of another experiment", a.Name))
		}
		seen[a.Name] = true
		switch {
		case strings.TrimSpace(a.Model) == "":
			v.add(key+".model", "must not be empty")
		case len(a.Model) > maxArmModel:
			v.add(key+".model", fmt.Sprintf("must be at most %d bytes, got %d", maxArmModel, len(a.Model)))
		}
		if a.Prompt != "" {
			oneOf(v.add, key+".prompt", a.Prompt, PromptVariantNames())
		}
		if a.Share < 0 || a.Share > 1 || math.IsNaN(a.Share) {
			v.add(key+".share", fmt.Sprintf("must be between 0 and 1, got %g", a.Share))
			continue
		}
		sum += a.Share
	}
	if sum > 1+1e-9 {
		v.add("llm.experiments", fmt.Sprintf("the shares must sum to at most 1, got %g", sum))
	}
}

// safeArmName reports whether name is 1 to maxArmName lowercase letters,
// digits, '-', '_' or '.', starting with a letter or digit.
func safeArmName(name string) bool {
	if name == "" || len(name) > maxArmName || name[0] == '-' || name[0] == '.' || name[0] == '_' {
		return false
	}
	for _, c := range []byte(name) {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// validation collects problems as "key: message" errors.
type validation struct {
	errs []error
}

func (v *validation) add(key, msg string) {
	v.errs = append(v.errs, errors.New(key+": "+msg))
}

// url checks that s is an absolute http or https URL.
func (v *validation) url(key, s string) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		v.add(key, fmt.Sprintf("%q is not an absolute http(s) URL", s))
	}
}

func positive[T int | time.Duration](v *validation, key string, n T) {
	if n <= 0 {
		v.add(key, fmt.Sprintf("must be positive, got %v", n))
	}
}

func atLeast(v *validation, key string, n, least int) {
	if n < least {
		v.add(key, fmt.Sprintf("must be at least %d, got %d", least, n))
	}
}

func atLeastOne(v *validation, key string, n int) {
	if n < 1 {
		v.add(key, fmt.Sprintf("must be at least 1, got %d", n))
	}
}

func noLimit(v *validation, key string, d time.Duration) {
	if d < 0 {
		v.add(key, fmt.Sprintf("must not be negative (0 means no limit), got %v", d))
	}
}

func unlimited[T int | float64](v *validation, key string, n T) {
	if n < 0 {
		v.add(key, fmt.Sprintf("must not be negative (0 means unlimited), got %v", n))
	}
}
