package github

import "strings"

// The webhook payloads MergeGuard acts on, reduced to the fields it reads.
// Decoding only these skips the hundreds of fields go-github's event types
// would allocate, and keeps GitHub's wire format in this package.
//
// GitHub docs: https://docs.github.com/webhooks/webhook-events-and-payloads

// Repository is the repository of a payload.
type Repository struct {
	ID       int64  `json:"id"`
	Name     string `json:"name"`
	FullName string `json:"full_name"`
	Private  bool   `json:"private"`
	Owner    struct {
		Login string `json:"login"`
	} `json:"owner"`
}

// Account is a user or organisation of a payload.
type Account struct {
	Login string `json:"login"`
	// Type is User, Organization or Bot.
	Type string `json:"type"`
}

// IsBot reports whether the account is a bot, MergeGuard's own included.
func (a Account) IsBot() bool {
	return strings.EqualFold(a.Type, "Bot") || strings.HasSuffix(strings.ToLower(a.Login), "[bot]")
}

// Installation is the App installation a payload was sent for.
type Installation struct {
	ID      int64   `json:"id"`
	Account Account `json:"account"`
}

// PullRequestEvent is a pull_request delivery.
type PullRequestEvent struct {
	Action      string `json:"action"`
	Number      int    `json:"number"`
	PullRequest struct {
		Head struct {
			SHA string `json:"sha"`
			Ref string `json:"ref"`
		} `json:"head"`
		Base struct {
			SHA string `json:"sha"`
		} `json:"base"`
	} `json:"pull_request"`
	Repository   Repository   `json:"repository"`
	Installation Installation `json:"installation"`
}

// IssueCommentEvent is an issue_comment delivery: a comment on an issue or
// on a pull request's conversation.
type IssueCommentEvent struct {
	Action string `json:"action"`
	Issue  struct {
		Number int `json:"number"`
		// State is open or closed.
		State string `json:"state"`
		// PullRequest is set when the issue is a pull request.
		PullRequest *struct {
			URL string `json:"url"`
		} `json:"pull_request"`
	} `json:"issue"`
	Comment struct {
		ID   int64   `json:"id"`
		Body string  `json:"body"`
		User Account `json:"user"`
	} `json:"comment"`
	Repository   Repository   `json:"repository"`
	Installation Installation `json:"installation"`
}

// InstallationEvent is an installation delivery: the App installed,
// suspended, deleted, or its permissions accepted.
type InstallationEvent struct {
	Action       string       `json:"action"`
	Installation Installation `json:"installation"`
	Repositories []Repository `json:"repositories"`
}

// InstallationRepositoriesEvent is an installation_repositories delivery:
// repositories added to or removed from an installation.
type InstallationRepositoriesEvent struct {
	Action              string       `json:"action"`
	Installation        Installation `json:"installation"`
	RepositoriesAdded   []Repository `json:"repositories_added"`
	RepositoriesRemoved []Repository `json:"repositories_removed"`
}
