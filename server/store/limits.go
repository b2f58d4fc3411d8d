package store

import "time"

// Limits on what webhook deliveries may ask for, enforced in the
// transaction that records the delivery (so they hold across replicas).
const (
	// ReplayWindow is how long a pull_request delivery's (repository, pull
	// request, action, head SHA) is remembered: the same event under a new
	// delivery id within it is recorded as a duplicate and queues nothing.
	ReplayWindow = time.Hour

	// CommandWindow is the sliding window of the command rate limits.
	CommandWindow = 10 * time.Minute
	// MaxCommandsPerPR is how many comment commands one pull request may
	// carry out within CommandWindow, whoever writes them.
	MaxCommandsPerPR = 5
	// MaxCommandsPerUser is how many comment commands one user may carry
	// out within CommandWindow, on any pull request.
	MaxCommandsPerUser = 10
)
