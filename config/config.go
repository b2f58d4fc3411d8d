// Package config holds MergeGuard's configuration: the application Config
// (a YAML file overridden by environment variables, see Load) and the
// per-repository .mergeguard.yml schema (Repo, see ParseRepo). Both are
// decoded strictly: an unknown key or a value of the wrong type is an error
// that names the file, the line and the key. Defaults live in defaults.go.
package config

import (
	"strings"
	"time"
)

// Config is MergeGuard's application configuration. Build it with Load (or
// Default), then check it with Validate.
type Config struct {
	// Server is the HTTP server.
	Server Server `yaml:"server" json:"server"`
	// Database is the Postgres database.
	Database Database `yaml:"database" json:"database"`
	// GitHub is the GitHub App and the API it talks to.
	GitHub GitHub `yaml:"github" json:"github"`
	// LLM is the OpenAI-compatible model server the reviewers call.
	LLM LLM `yaml:"llm" json:"llm"`
	// Workers are the review job workers of `mergeguard serve`.
	Workers Workers `yaml:"workers" json:"workers"`
	// API is the HTTP review API.
	API API `yaml:"api" json:"api"`
	// Review is the repository configuration used where a repository has no
	// .mergeguard.yml, and for reviews of a bare diff through the API or CLI.
	Review Repo `yaml:"review" json:"review"`
	// Budgets cap what reviews may spend.
	Budgets Budgets `yaml:"budgets" json:"budgets"`
	// Memory bounds the memory of dismissals (docs/quality.md).
	Memory Memory `yaml:"memory" json:"memory"`
	// Log is the process log.
	Log Log `yaml:"log" json:"log"`

	// problems are what Load found wrong in the environment and in files
	// it read (an integer variable that is not a number, an unreadable
	// private key file). Validate reports them with everything else.
	problems []error
}

// Server configures the HTTP server.
type Server struct {
	// Addr is the listen address, e.g. ":8080" (MERGEGUARD_ADDR).
	Addr string `yaml:"addr" json:"addr"`
	// PublicURL is the URL people and GitHub reach the server at, used in
	// links posted on pull requests; empty leaves links out.
	PublicURL string `yaml:"public_url" json:"public_url"`
	// ReadHeaderTimeout bounds reading request headers (slow-client guard).
	ReadHeaderTimeout time.Duration `yaml:"read_header_timeout" json:"read_header_timeout"`
	// ReadTimeout bounds reading a whole request; 0 means no limit.
	ReadTimeout time.Duration `yaml:"read_timeout" json:"read_timeout"`
	// WriteTimeout bounds writing a response; 0 means no limit. Streaming
	// handlers (SSE) extend their own deadline.
	WriteTimeout time.Duration `yaml:"write_timeout" json:"write_timeout"`
	// IdleTimeout bounds keep-alive connections waiting for a request.
	IdleTimeout time.Duration `yaml:"idle_timeout" json:"idle_timeout"`
	// ShutdownTimeout is the grace period for in-flight requests on
	// SIGTERM/SIGINT.
	ShutdownTimeout time.Duration `yaml:"shutdown_timeout" json:"shutdown_timeout"`
}

// Database configures Postgres.
type Database struct {
	// URL is the Postgres connection URL or keyword/value string
	// (DATABASE_URL). It may carry a password, so it is a Secret.
	URL Secret `yaml:"url" json:"url"`
	// Migrate makes `serve` apply pending migrations at start
	// (MERGEGUARD_MIGRATE). When false, serve only checks that the schema
	// is current and clean, and refuses to start otherwise: for operators
	// who migrate with `mergeguard migrate up` (the Helm chart's
	// migration Job) before new replicas start.
	Migrate bool `yaml:"migrate" json:"migrate"`
	// SecretKey encrypts the secrets MergeGuard keeps in the database (the
	// GitHub App the /setup flow created) with AES-256-GCM
	// (MERGEGUARD_SECRET_KEY): 32 bytes, written as 64 hexadecimal digits or
	// in base64 (`openssl rand -base64 32`). Empty turns the /setup flow off.
	SecretKey Secret `yaml:"secret_key" json:"secret_key"`
}

// GitHub mirrors go-githubapp's githubapp.Config (same YAML keys and
// environment variables), plus a private key file.
type GitHub struct {
	// WebURL is the GitHub web address (GITHUB_WEB_URL).
	WebURL string `yaml:"web_url" json:"web_url"`
	// V3APIURL is the REST API address (GITHUB_V3_API_URL).
	V3APIURL string `yaml:"v3_api_url" json:"v3_api_url"`
	// V4APIURL is the GraphQL API address (GITHUB_V4_API_URL).
	V4APIURL string `yaml:"v4_api_url" json:"v4_api_url"`
	// App is the GitHub App's identity.
	App GitHubApp `yaml:"app" json:"app"`
	// OAuth is the App's OAuth client, for "Sign in with GitHub".
	OAuth GitHubOAuth `yaml:"oauth" json:"oauth"`
	// Timeout bounds each attempt of a GitHub API request, reading the
	// answer included.
	Timeout time.Duration `yaml:"timeout" json:"timeout"`
	// MinWriteInterval is the least time between two content-creating
	// requests (a review, a comment, a check run) of one installation from
	// one replica. GitHub's REST best practices ask for at least a second;
	// a GitHub Enterprise Server without secondary rate limits may allow
	// less.
	MinWriteInterval time.Duration `yaml:"min_write_interval" json:"min_write_interval"`
	// MaxRetries is how many times a GitHub request that failed for a
	// passing reason (a server error, a lost connection, a rate limit) is
	// sent again.
	MaxRetries int `yaml:"max_retries" json:"max_retries"`
	// RetryBackoff is the first wait after a server error or a network
	// failure of a read; it doubles with each retry.
	RetryBackoff time.Duration `yaml:"retry_backoff" json:"retry_backoff"`
	// RetryMaxWait is the longest single wait. A rate limit that asks for
	// more fails the request at once, so that its job is retried later
	// instead of holding a worker.
	RetryMaxWait time.Duration `yaml:"retry_max_wait" json:"retry_max_wait"`
	// MaxInlineComments caps the inline comments of one review; further
	// findings are listed in the review body. GitHub documents no maximum,
	// but each review is one content-creating request under the secondary
	// rate limits, and tool authors report rejected reviews with large
	// batches; reviewdog caps at 30 after "403 You have triggered an abuse
	// detection mechanism" (REVIEW_RULES.md section 3).
	MaxInlineComments int `yaml:"max_inline_comments" json:"max_inline_comments"`
	// WebhookBytesInFlight caps the bytes of webhook bodies a replica
	// holds at once, signatures not yet checked included; a delivery that
	// does not fit is answered 503.
	WebhookBytesInFlight int64 `yaml:"webhook_bytes_in_flight" json:"webhook_bytes_in_flight"`
	// WebhookMinBodyRate is the rate, in bytes a second averaged since the
	// request began, below which a webhook body is cut off (408) once
	// WebhookBodyGrace has passed.
	WebhookMinBodyRate int64 `yaml:"webhook_min_body_rate" json:"webhook_min_body_rate"`
	// WebhookBodyGrace is how long a webhook body may arrive at any rate.
	WebhookBodyGrace time.Duration `yaml:"webhook_body_grace" json:"webhook_body_grace"`
	// WebhookSlowBodiesPerAddress caps the webhook bodies from one client
	// address still being read after WebhookBodyGrace.
	WebhookSlowBodiesPerAddress int `yaml:"webhook_slow_bodies_per_address" json:"webhook_slow_bodies_per_address"`
}

// GitHubApp is the GitHub App's identity. It is all or nothing: either every
// field is empty (MergeGuard runs without GitHub: API and diff reviews only)
// or IntegrationID, WebhookSecret and a private key are all set.
type GitHubApp struct {
	// IntegrationID is the App ID (GITHUB_APP_INTEGRATION_ID).
	IntegrationID int64 `yaml:"integration_id" json:"integration_id"`
	// WebhookSecret checks webhook signatures (GITHUB_APP_WEBHOOK_SECRET).
	WebhookSecret Secret `yaml:"webhook_secret" json:"webhook_secret"`
	// PrivateKey is the App's private key as PEM text
	// (GITHUB_APP_PRIVATE_KEY). Load fills it from PrivateKeyFile.
	PrivateKey Secret `yaml:"private_key" json:"private_key"`
	// PrivateKeyFile is a path to the PEM private key
	// (MERGEGUARD_GITHUB_PRIVATE_KEY_FILE); set it or PrivateKey, not both.
	PrivateKeyFile string `yaml:"private_key_file" json:"private_key_file"`
}

// Configured reports whether any part of the GitHub App is set. Validate
// makes sure that then every part is.
func (a GitHubApp) Configured() bool {
	return a.IntegrationID != 0 || a.WebhookSecret.IsSet() || a.PrivateKey.IsSet() || a.PrivateKeyFile != ""
}

// GitHubOAuth is the GitHub App's OAuth client (the App settings' "Client
// ID" and a client secret), which the web UI's "Sign in with GitHub" uses.
// Both or neither.
type GitHubOAuth struct {
	// ClientID is the App's client id (GITHUB_OAUTH_CLIENT_ID).
	ClientID string `yaml:"client_id" json:"client_id"`
	// ClientSecret is a client secret of the App
	// (GITHUB_OAUTH_CLIENT_SECRET).
	ClientSecret Secret `yaml:"client_secret" json:"client_secret"`
}

// Configured reports whether the OAuth client is set; Validate makes sure
// that then both parts are.
func (o GitHubOAuth) Configured() bool { return o.ClientID != "" || o.ClientSecret.IsSet() }

// LLM configures the OpenAI-compatible model server.
type LLM struct {
	// BaseURL is the API base, e.g. https://api.openai.com/v1
	// (OPENAI_BASE_URL).
	BaseURL string `yaml:"base_url" json:"base_url"`
	// APIKey is the bearer key (OPENAI_API_KEY); local servers may need none.
	APIKey Secret `yaml:"api_key" json:"api_key"`
	// Model is the model name (MERGEGUARD_MODEL).
	Model string `yaml:"model" json:"model"`
	// ContextTokens is the model's context window; no prompt exceeds it.
	ContextTokens int `yaml:"context_tokens" json:"context_tokens"`
	// MaxOutputTokens caps each completion.
	MaxOutputTokens int `yaml:"max_output_tokens" json:"max_output_tokens"`
	// Temperature is the sampling temperature, 0 to 2.
	Temperature float64 `yaml:"temperature" json:"temperature"`
	// Timeout bounds one model call.
	Timeout time.Duration `yaml:"timeout" json:"timeout"`
	// RetryBase is the wait before the first retry of a failed model call
	// the server gave no wait for (doubled at each retry); RetryMax the
	// longest wait, and the longest a server may ask for (Retry-After)
	// before the call fails at once.
	RetryBase time.Duration `yaml:"retry_base" json:"retry_base"`
	RetryMax  time.Duration `yaml:"retry_max" json:"retry_max"`
	// MaxTurns caps the tool-calling turns of one agent run.
	MaxTurns int `yaml:"max_turns" json:"max_turns"`
	// MaxChunkTokens caps the diff text of one reviewer agent's chunk:
	// smaller chunks review better and in parallel.
	MaxChunkTokens int `yaml:"max_chunk_tokens" json:"max_chunk_tokens"`
	// MaxChunks caps the chunks the model reviews in one review, riskiest
	// first; the rest get the built-in analyzers only.
	MaxChunks int `yaml:"max_chunks" json:"max_chunks"`
	// AgentTimeout bounds one reviewer agent run, all its turns included.
	AgentTimeout time.Duration `yaml:"agent_timeout" json:"agent_timeout"`
	// ToolResultBytes caps the answer of one tool call; ToolReadLines the
	// lines one file read returns; ToolSearchFiles the files one search
	// reads.
	ToolResultBytes int `yaml:"tool_result_bytes" json:"tool_result_bytes"`
	ToolReadLines   int `yaml:"tool_read_lines" json:"tool_read_lines"`
	ToolSearchFiles int `yaml:"tool_search_files" json:"tool_search_files"`
	// Concurrency caps the reviewer agents of one review running at once.
	Concurrency int `yaml:"concurrency" json:"concurrency"`
	// APIType is "openai" (any OpenAI-compatible server) or "azure" (Azure
	// OpenAI: base_url is the resource URL, model the deployment name).
	APIType string `yaml:"api_type" json:"api_type"`
	// APIVersion is Azure OpenAI's api-version; empty keeps the client's.
	APIVersion string `yaml:"api_version" json:"api_version"`
	// ResponseFormat is how the reviewer's final JSON is asked for:
	// json_schema (structured outputs), json_object, or text for servers
	// that support neither.
	ResponseFormat string `yaml:"response_format" json:"response_format"`
	// StrictTools sends OpenAI strict-mode schemas for the tools; servers
	// other than OpenAI and Azure handle the default (non-strict) better.
	StrictTools bool `yaml:"strict_tools" json:"strict_tools"`
	// Walkthrough has the model write each full review's walkthrough in
	// one planner call; off, the walkthrough is built from the diff alone.
	Walkthrough bool `yaml:"walkthrough" json:"walkthrough"`
	// Prices are USD prices per model name, used to compute review cost. A
	// file's entries are added to the built-in table, replacing same names.
	Prices map[string]Price `yaml:"prices" json:"prices"`
	// Experiments are the arms of a model comparison on live traffic
	// besides the default arm (Model with the default prompt): each
	// reviews its share of pull requests, chosen by a stable hash of the
	// pull request (docs/quality.md, Choosing a model).
	Experiments []Experiment `yaml:"experiments" json:"experiments"`
}

// Experiment is one arm of a model comparison: the share of pull requests
// it reviews with its model and prompt variant.
type Experiment struct {
	// Name names the arm in runs and quality reports: 1 to 32 lowercase
	// letters, digits, '-', '_' or '.'; never "default" (the default arm).
	Name string `yaml:"name" json:"name"`
	// Model is the model the arm's runs use, on the same server (base_url).
	Model string `yaml:"model" json:"model"`
	// Prompt is the reviewer prompt variant (PromptVariantNames); "" is
	// the default prompt.
	Prompt string `yaml:"prompt" json:"prompt"`
	// Share is the share of pull requests the arm reviews, 0 to 1; the
	// shares of all arms sum to at most 1, the rest is the default arm's.
	Share float64 `yaml:"share" json:"share"`
}

// Configured reports whether an LLM is configured: an API key is set, or
// the base URL is not the default OpenAI one (a local server may need no
// key). Without one reviews run the built-in analyzers only.
func (l LLM) Configured() bool {
	return l.APIKey.IsSet() || strings.TrimRight(l.BaseURL, "/") != defaultLLMBaseURL
}

// Price is a model's price in USD per million tokens.
type Price struct {
	InputPerMillion  float64 `yaml:"input_per_million" json:"input_per_million"`
	OutputPerMillion float64 `yaml:"output_per_million" json:"output_per_million"`
}

// Cost returns the USD cost of the given token counts.
func (p Price) Cost(inputTokens, outputTokens int) float64 {
	return (float64(inputTokens)*p.InputPerMillion + float64(outputTokens)*p.OutputPerMillion) / 1e6
}

// Workers configures the durable review job workers.
type Workers struct {
	// Concurrency is the number of jobs this process runs at once
	// (MERGEGUARD_WORKERS); 0 runs no workers in this process.
	Concurrency int `yaml:"concurrency" json:"concurrency"`
	// Lease is how long a taken job stays reserved without renewal; a job
	// whose worker died is taken again after it.
	Lease time.Duration `yaml:"lease" json:"lease"`
	// PollInterval is how often an idle worker looks for jobs (a new job's
	// notification may wake it sooner).
	PollInterval time.Duration `yaml:"poll_interval" json:"poll_interval"`
	// MaxAttempts is how many times a failing job is tried.
	MaxAttempts int `yaml:"max_attempts" json:"max_attempts"`
	// RunTimeout bounds one attempt of a run, wall clock: a run still
	// working then is stopped and recorded failed with the reason.
	RunTimeout time.Duration `yaml:"run_timeout" json:"run_timeout"`
	// RetryBase is the wait before the first retry of a run that failed
	// for a passing reason; it doubles with each attempt, up to RetryMax.
	RetryBase time.Duration `yaml:"retry_base" json:"retry_base"`
	RetryMax  time.Duration `yaml:"retry_max" json:"retry_max"`
}

// API configures the HTTP review API.
type API struct {
	// Token is the bearer token /api/review* and the web UI require
	// (MERGEGUARD_API_TOKEN); without one serve generates a token, keeps it
	// in the database and logs a sign-in link with it.
	Token Secret `yaml:"token" json:"token"`
	// MaxConcurrentSubmissions caps the POST /api/review requests handled
	// at once per replica (body read, diff parsed, run queued); more are
	// answered 503.
	MaxConcurrentSubmissions int `yaml:"max_concurrent_submissions" json:"max_concurrent_submissions"`
	// MaxStreams caps the open event streams of a replica (503 beyond).
	MaxStreams int `yaml:"max_streams" json:"max_streams"`
	// MaxStreamsPerClient caps the open event streams of one client
	// address (429 beyond; behind a proxy every client has its address).
	MaxStreamsPerClient int `yaml:"max_streams_per_client" json:"max_streams_per_client"`
	// StreamBatch is how many events a stream holds in memory at a time.
	StreamBatch int `yaml:"stream_batch" json:"stream_batch"`
	// StreamWriteTimeout bounds writing one batch of events to a client;
	// a client that does not read is dropped.
	StreamWriteTimeout time.Duration `yaml:"stream_write_timeout" json:"stream_write_timeout"`
	// StreamHeartbeat is the interval of the comments that keep idle
	// proxies from closing a stream.
	StreamHeartbeat time.Duration `yaml:"stream_heartbeat" json:"stream_heartbeat"`
	// StreamPoll is how often a stream looks for new events when no
	// notification arrived.
	StreamPoll time.Duration `yaml:"stream_poll" json:"stream_poll"`
}

// Budgets cap spending; 0 means unlimited (review_max_tokens has a finite
// default).
type Budgets struct {
	// ReviewMaxTokens caps the tokens (input + output) of one review.
	ReviewMaxTokens int `yaml:"review_max_tokens" json:"review_max_tokens"`
	// InstallationDailyMaxCost caps one installation's USD cost per UTC day.
	InstallationDailyMaxCost float64 `yaml:"installation_daily_max_cost" json:"installation_daily_max_cost"`
	// InstallationDailyMaxTokens caps one installation's tokens per UTC day.
	InstallationDailyMaxTokens int `yaml:"installation_daily_max_tokens" json:"installation_daily_max_tokens"`
}

// Memory bounds the memory of dismissals: what a review reads to decide
// which of its findings are similar to enough findings writers dismissed
// (the repository's memory.suppress_after) not to be posted.
type Memory struct {
	// Dismissals is how many of a repository's most recent dismissals a
	// review compares its findings with (and as many revivals).
	Dismissals int `yaml:"dismissals" json:"dismissals"`
}

// MaxMemoryDismissals caps memory.dismissals: every finding of a review is
// compared with each.
const MaxMemoryDismissals = 10000

// Log configures the process log.
type Log struct {
	// Level is one of trace, debug, info, warn, error (MERGEGUARD_LOG_LEVEL).
	Level string `yaml:"level" json:"level"`
	// Format is auto (console on a terminal, JSON otherwise), json or
	// console (MERGEGUARD_LOG_FORMAT).
	Format string `yaml:"format" json:"format"`
}
