package config

import (
	"os"
	"strconv"
)

// UpstreamTimeout returns the upstream timeout in milliseconds
// (UPSTREAM_TIMEOUT_MS, default 5000).
func UpstreamTimeout() int {
	n, err := strconv.Atoi(os.Getenv("UPSTREAM_TIMEOUT_MS"))
	if err != nil || n <= 0 {
		return 5000
	}
	return n
}
