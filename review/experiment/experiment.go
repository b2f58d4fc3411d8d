// Package experiment chooses which arm of a model comparison on live
// traffic (llm.experiments; docs/quality.md, Choosing a model) reviews a
// pull request: by a stable hash of the pull request, so that every run on
// it — each push, rerun and answer, on any replica — uses the same arm and
// no pull request is reviewed by two. It is pure.
package experiment

import (
	"crypto/sha256"
	"encoding/binary"
	"strconv"
	"strings"

	"github.com/mergeguard/mergeguard/config"
)

// Point maps pull request number of repo ("owner/name", in any case: GitHub's
// names are case-insensitive) to [0, 1): the first 53 bits of the SHA-256
// of "owner/name#number", as a fraction. Uniform and independent across
// pull requests, the same in every process and version.
func Point(repo string, number int) float64 {
	sum := sha256.Sum256([]byte(strings.ToLower(repo) + "#" + strconv.Itoa(number)))
	return float64(binary.BigEndian.Uint64(sum[:8])>>11) / (1 << 53)
}

// Choose names the arm that reviews pull request number of repo: the arms
// take consecutive slices of [0, 1), in order, each as wide as its share,
// and the pull request goes to the one its Point falls in; past them, to
// config.DefaultArm. An arm appended to arms, or the last arm's share
// grown, takes pull requests from the default arm only; changing an
// earlier share or the order moves pull requests between arms.
func Choose(arms []config.Experiment, repo string, number int) string {
	p, lo := Point(repo, number), 0.0
	for _, a := range arms {
		if p < lo+a.Share {
			return a.Name
		}
		lo += a.Share
	}
	return config.DefaultArm
}
