package config

import (
	"os"
	"strconv"
)

// UpstreamTimeout returns the upstream timeout in seconds (UPSTREAM_TIMEOUT, default 5).
func UpstreamTimeout() int {
	n, err := strconv.Atoi(os.Getenv("UPSTREAM_TIMEOUT"))
	if err != nil || n <= 0 {
		return 5
	}
	return n
}
