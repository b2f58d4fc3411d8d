package webhook

import (
	"strconv"
	"strings"
)

// app is who MergeGuard is on GitHub, to tell its own review threads and
// check runs from everyone else's.
type app struct {
	// login is the App's bot account, "<slug>[bot]"; "" when unknown.
	login string
	// id is the App's id; 0 when unknown.
	id int64
}

// known reports whether the App's bot login is known: without it nothing
// can be told to be MergeGuard's.
func (a app) known() bool { return a.login != "" }

// isBot reports whether login is the App's bot account.
func (a app) isBot(login string) bool { return a.known() && strings.EqualFold(login, a.login) }

// owns reports whether a check run's app (its id and slug, either possibly
// absent from a payload) is MergeGuard: what is known of both must agree,
// and at least one must be known.
func (a app) owns(id int64, slug string) bool {
	matched := false
	if a.id != 0 && id != 0 {
		if id != a.id {
			return false
		}
		matched = true
	}
	if mine := strings.TrimSuffix(a.login, "[bot]"); mine != "" && slug != "" {
		if !strings.EqualFold(slug, mine) {
			return false
		}
		matched = true
	}
	return matched
}

// appName names the app of a check run in a delivery's detail.
func appName(id int64, slug string) string {
	if slug != "" {
		return slug
	}
	return "app " + strconv.FormatInt(id, 10)
}
