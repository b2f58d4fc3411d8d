package config

import "time"

// DefaultPath is the configuration file Load reads when it is given no path
// and the file exists (relative to the working directory).
const DefaultPath = "config/mergeguard.yml"

// defaultLLMBaseURL is OpenAI's API: with it and no API key no LLM is
// configured (LLM.Configured).
const defaultLLMBaseURL = "https://api.openai.com/v1"

// Default returns the configuration used where neither the file nor the
// environment says otherwise. Every default of the application lives here.
func Default() Config {
	return Config{
		Database: Database{Migrate: true},
		Server: Server{
			Addr:              ":8080",
			ReadHeaderTimeout: 10 * time.Second,
			ReadTimeout:       30 * time.Second,
			WriteTimeout:      60 * time.Second,
			IdleTimeout:       120 * time.Second,
			ShutdownTimeout:   30 * time.Second,
		},
		GitHub: GitHub{
			WebURL:               "https://github.com/",
			V3APIURL:             "https://api.github.com/",
			V4APIURL:             "https://api.github.com/graphql",
			Timeout:              30 * time.Second,
			MinWriteInterval:     time.Second,
			MaxRetries:           3,
			RetryBackoff:         time.Second,
			RetryMaxWait:         2 * time.Minute,
			MaxInlineComments:    30,
			WebhookBytesInFlight: 48 << 20,
			// GitHub gives up on a delivery after 10 s and sends at most
			// 25 MB: a real one arrives at 2.5 MB/s or more. 128 KiB/s
			// after 5 s lets a 25 MB body take over three minutes.
			WebhookMinBodyRate:          128 << 10,
			WebhookBodyGrace:            5 * time.Second,
			WebhookSlowBodiesPerAddress: 4,
		},
		API: API{
			MaxConcurrentSubmissions: 2,
			MaxStreams:               512,
			MaxStreamsPerClient:      32,
			StreamBatch:              100,
			StreamWriteTimeout:       10 * time.Second,
			StreamHeartbeat:          15 * time.Second,
			StreamPoll:               5 * time.Second,
		},
		LLM: LLM{
			BaseURL:         defaultLLMBaseURL,
			Model:           "gpt-4o-mini",
			ContextTokens:   128000,
			MaxOutputTokens: 4096,
			Temperature:     0.2,
			Timeout:         2 * time.Minute,
			RetryBase:       time.Second,
			RetryMax:        time.Minute,
			MaxTurns:        10,
			MaxChunkTokens:  12000,
			MaxChunks:       40,
			AgentTimeout:    5 * time.Minute,
			ToolResultBytes: 16 << 10,
			ToolReadLines:   400,
			ToolSearchFiles: 1000,
			Concurrency:     4,
			APIType:         "openai",
			ResponseFormat:  "json_schema",
			Walkthrough:     true,
			Prices:          defaultPrices(),
		},
		Workers: Workers{
			Concurrency:  2,
			Lease:        2 * time.Minute,
			PollInterval: 2 * time.Second,
			MaxAttempts:  3,
			RunTimeout:   30 * time.Minute,
			RetryBase:    30 * time.Second,
			RetryMax:     10 * time.Minute,
		},
		Budgets: Budgets{
			ReviewMaxTokens: 2_000_000,
		},
		Memory: Memory{Dismissals: 500},
		Review: DefaultRepo(),
		Log: Log{
			Level:  "info",
			Format: "auto",
		},
	}
}

// defaultPrices is OpenAI's published list price per million tokens for the
// models MergeGuard is commonly run with. Other models cost nothing until the
// configuration prices them.
func defaultPrices() map[string]Price {
	return map[string]Price{
		"gpt-4o":       {InputPerMillion: 2.50, OutputPerMillion: 10.00},
		"gpt-4o-mini":  {InputPerMillion: 0.15, OutputPerMillion: 0.60},
		"gpt-4.1":      {InputPerMillion: 2.00, OutputPerMillion: 8.00},
		"gpt-4.1-mini": {InputPerMillion: 0.40, OutputPerMillion: 1.60},
		"gpt-4.1-nano": {InputPerMillion: 0.10, OutputPerMillion: 0.40},
	}
}

// DefaultRepo returns the configuration of a repository without a
// .mergeguard.yml.
func DefaultRepo() Repo {
	return Repo{
		Enabled: true,
		AutoReview: AutoReview{
			Enabled:             true,
			IgnoreTitleKeywords: []string{"WIP", "[skip review]", "DO NOT MERGE"},
		},
		SeverityThreshold: "info",
		BlockingSeverity:  "critical",
		MaxFiles:          300,
		Language:          "en",
		Incremental:       true,
		Check:             Check{BlockingConclusion: "failure"},
		Chat:              Chat{MaxAnswersPerThread: 5},
		Secrets:           Secrets{Removed: SecretsRemovedBlock, BlockInTests: false},
		Memory:            RepoMemory{SuppressAfter: 3},
	}
}
