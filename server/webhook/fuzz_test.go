package webhook_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mergeguard/mergeguard/github/githubtest"
)

// handledEvents are the events the intake records; the fuzzer picks one by
// index so that every input reaches a handler.
var handledEvents = []string{"pull_request", "issue_comment", "installation", "installation_repositories"}

// FuzzWebhook sends signed deliveries with arbitrary payloads to the intake
// on a real database, each twice (GitHub redelivers). Whatever the payload:
// no panic; the answer is 2xx, 400 for a malformed payload, or 500 when
// GitHub could not be asked about a command; a delivery answered below 500
// is recorded exactly once and one answered 500 is not recorded at all, so
// GitHub's redelivery is processed (nothing lost); the redelivery queues no
// second run. The seed corpus is every real payload in githubtest's
// testdata plus the committed corpus in testdata/fuzz/FuzzWebhook.
func FuzzWebhook(f *testing.F) {
	for _, name := range githubtest.WebhookPayloads() {
		event, _, _ := strings.Cut(name, "/")
		for i, e := range handledEvents {
			if e == event {
				f.Add(uint8(i), githubtest.Payload(f, name))
			}
		}
	}
	f.Add(uint8(0), []byte(`{"action": "opened", `))
	f.Add(uint8(1), []byte(`{"action":"created","issue":{"number":1,"pull_request":{}},"comment":{"body":"/mergeguard rerun","user":{"login":"x"}},"installation":{"id":1},"repository":{"full_name":"a/b"}}`))

	base := newIntake(f)
	n := 0
	f.Fuzz(func(t *testing.T, ev uint8, payload []byte) {
		in := *base // F's methods may not be called in the fuzz target
		in.t = t
		event := handledEvents[int(ev)%len(handledEvents)]
		n++
		id := fmt.Sprintf("fuzz-%d", n)
		d := githubtest.Delivery{Event: event, ID: id, Payload: payload}

		first := in.send(d)
		runs := in.count("review_runs", "delivery_id = $1", id)
		second := in.send(d)

		recorded := in.count("webhook_deliveries", "delivery_id = $1", id)
		switch {
		case first == http.StatusInternalServerError:
			if second != http.StatusInternalServerError && recorded != 1 {
				t.Errorf("%s: redelivery answered %d but the delivery is recorded %d times", event, second, recorded)
			}
			if second == http.StatusInternalServerError && recorded != 0 {
				t.Errorf("%s: answered 500 yet recorded: GitHub's redelivery would be ignored", event)
			}
		case first < 300 || first == http.StatusBadRequest:
			if recorded != 1 {
				t.Errorf("%s: answered %d, delivery recorded %d times, want 1", event, first, recorded)
			}
			if second != first {
				t.Errorf("%s: redelivery answered %d, first delivery %d", event, second, first)
			}
		default:
			t.Errorf("%s: answered %d, want 2xx, 400 or 500", event, first)
		}
		if got := in.count("review_runs", "delivery_id = $1", id); got != runs || got > 1 {
			t.Errorf("%s: %d runs after the first delivery, %d after the redelivery; want at most one, unchanged", event, runs, got)
		}
	})
}
