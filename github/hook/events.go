package hook

import (
	"strings"
	"time"
)

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
		// Merged and ClosedAt say how and when a closed pull request
		// closed (ClosedAt nil while it is open).
		Merged   bool       `json:"merged"`
		ClosedAt *time.Time `json:"closed_at"`
	} `json:"pull_request"`
	// Changes is what an "edited" delivery changed: the previous title,
	// description or base, each present only when it changed.
	Changes struct {
		Title *struct {
			From string `json:"from"`
		} `json:"title"`
	} `json:"changes"`
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

// CheckRunEvent is a check_run delivery: a check run created, completed,
// rerequested (the "Re-run" button) or an action requested.
type CheckRunEvent struct {
	Action   string `json:"action"`
	CheckRun struct {
		ID         int64  `json:"id"`
		Name       string `json:"name"`
		HeadSHA    string `json:"head_sha"`
		ExternalID string `json:"external_id"`
		Status     string `json:"status"`
		Conclusion string `json:"conclusion"`
		App        struct {
			ID   int64  `json:"id"`
			Slug string `json:"slug"`
		} `json:"app"`
		// PullRequests are the open pull requests whose head is HeadSHA
		// (empty for pushes from forks).
		PullRequests []struct {
			Number int `json:"number"`
			Head   struct {
				SHA string `json:"sha"`
				Ref string `json:"ref"`
			} `json:"head"`
			Base struct {
				SHA string `json:"sha"`
			} `json:"base"`
		} `json:"pull_requests"`
	} `json:"check_run"`
	Repository   Repository   `json:"repository"`
	Installation Installation `json:"installation"`
	Sender       Account      `json:"sender"`
}

// ReviewComment is a pull-request review comment of a payload.
type ReviewComment struct {
	ID int64 `json:"id"`
	// InReplyToID is the thread's first comment, 0 for a first comment.
	InReplyToID int64   `json:"in_reply_to_id"`
	ReviewID    int64   `json:"pull_request_review_id"`
	Body        string  `json:"body"`
	User        Account `json:"user"`
	Path        string  `json:"path"`
	Line        int     `json:"line"`
	CommitID    string  `json:"commit_id"`
}

// PullRequestReviewThreadEvent is a pull_request_review_thread delivery: a
// review thread resolved or unresolved.
type PullRequestReviewThreadEvent struct {
	Action      string `json:"action"`
	PullRequest struct {
		Number int `json:"number"`
	} `json:"pull_request"`
	Thread struct {
		// NodeID is the thread's GraphQL id (ReviewThread.ID).
		NodeID   string          `json:"node_id"`
		Comments []ReviewComment `json:"comments"`
	} `json:"thread"`
	Repository   Repository   `json:"repository"`
	Installation Installation `json:"installation"`
	Sender       Account      `json:"sender"`
}

// PullRequestReviewCommentEvent is a pull_request_review_comment delivery:
// a review comment created, edited or deleted.
type PullRequestReviewCommentEvent struct {
	Action      string        `json:"action"`
	Comment     ReviewComment `json:"comment"`
	PullRequest struct {
		Number int `json:"number"`
		Head   struct {
			SHA string `json:"sha"`
		} `json:"head"`
	} `json:"pull_request"`
	Repository   Repository   `json:"repository"`
	Installation Installation `json:"installation"`
	Sender       Account      `json:"sender"`
}

// RepositoryEvent is a repository delivery: a repository the App is
// installed on was renamed, transferred, deleted (and more, which
// MergeGuard ignores). Repository is the repository as it is now, with
// its new name; its id does not change.
type RepositoryEvent struct {
	Action       string       `json:"action"`
	Repository   Repository   `json:"repository"`
	Installation Installation `json:"installation"`
}
