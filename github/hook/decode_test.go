package hook_test

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/github/hook"
	"github.com/mergeguard/mergeguard/internal/race"
)

// decodes decodes a payload into every event type with a Decoder and with
// json.Unmarshal and reports the differences.
func decodes(t *testing.T, payload []byte) {
	t.Helper()
	same(t, hook.NewDecoder[hook.PullRequestEvent](), payload)
	same(t, hook.NewDecoder[hook.IssueCommentEvent](), payload)
	same(t, hook.NewDecoder[hook.InstallationEvent](), payload)
	same(t, hook.NewDecoder[hook.InstallationRepositoriesEvent](), payload)
	same(t, hook.NewDecoder[hook.CheckRunEvent](), payload)
	same(t, hook.NewDecoder[hook.PullRequestReviewThreadEvent](), payload)
	same(t, hook.NewDecoder[hook.PullRequestReviewCommentEvent](), payload)
}

func same[T any](t *testing.T, d hook.Decoder[T], payload []byte) {
	t.Helper()
	var got, want T
	gotErr := d.Decode(payload, &got)
	wantErr := json.Unmarshal(payload, &want)
	if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
		t.Fatalf("%T: Decode error %v, json.Unmarshal error %v", got, gotErr, wantErr)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("%T: Decode differs from json.Unmarshal (-want +got):\n%s", got, diff)
	}
}

// fixtures are the webhook payloads of githubtest.
func fixtures(t testing.TB) map[string][]byte {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("..", "githubtest", "testdata", "webhooks", "*", "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no webhook fixtures: %v", err)
	}
	out := map[string][]byte{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[p] = b
	}
	return out
}

func TestDecoderIsJSONUnmarshal(t *testing.T) {
	tests := map[string]string{
		"duplicate keys, last wins":     `{"action":"a","action":"b","number":1,"number":2}`,
		"nested objects merge":          `{"pull_request":{"head":{"sha":"x"}},"pull_request":{"head":{"ref":"y"}}}`,
		"key in another case":           `{"Action":"opened"}`,
		"escaped key":                   `{"act\u0069on":"opened"}`,
		"escaped value":                 `{"action":"op\"en\u00e9d\n"}`,
		"null object":                   `{"pull_request":null,"installation":{"id":null}}`,
		"wrong type":                    `{"number":"1","action":"x"}`,
		"wrong type in object":          `{"pull_request":"x"}`,
		"float into int":                `{"number":1.5}`,
		"unknown keys of every kind":    `{"a":[1,-2.5e+3,true,false,null,{"b":[]},"c"],"action":"x"}`,
		"trailing garbage":              `{"action":"x"} x`,
		"trailing comma":                `{"action":"x",}`,
		"control character in string":   "{\"x\":\"a\x01b\",\"action\":\"y\"}",
		"bad escape":                    `{"x":"\q","action":"y"}`,
		"short unicode escape":          `{"x":"\u12","action":"y"}`,
		"leading zero":                  `{"x":01}`,
		"bare minus":                    `{"x":-}`,
		"unterminated":                  `{"action":"x"`,
		"not an object":                 `[1,2]`,
		"null document":                 `null`,
		"empty":                         ``,
		"invalid UTF-8 in skipped text": "{\"x\":\"\xff\xfe\",\"action\":\"\xffy\"}",
		"repositories":                  `{"repositories":[{"id":1,"full_name":"o/r"}],"installation":{"id":7,"account":{"login":"o"}}}`,
		"pointer struct":                `{"issue":{"pull_request":{"url":"u"}},"issue":{"pull_request":null}}`,
		"white space everywhere":        " \t\n{ \"action\" : \"x\" , \"number\" :\r 3 } \n",
		"long strings":                  `{"x":"` + string(make([]byte, 0)) + `0123456789abcdef0123456789abcdef\"0123456789abcdef","action":"0123456789abcdef0123456789"}`,
	}
	for name, payload := range tests {
		t.Run(name, func(t *testing.T) { decodes(t, []byte(payload)) })
	}
	for name, payload := range fixtures(t) {
		t.Run(filepath.Base(filepath.Dir(name))+"/"+filepath.Base(name), func(t *testing.T) { decodes(t, payload) })
	}
}

// FuzzDecoder: for any input, every event type's Decoder returns what
// json.Unmarshal returns.
// TestDecoderIsJSONUnmarshalOnMutations compares Decoder with
// json.Unmarshal on fixtures with a few bytes changed, inserted or removed,
// drawn from JSON's structural and escape characters, white space and
// control characters: the walk must refuse exactly what json.Unmarshal
// refuses. Seeded, so a failure reproduces.
func TestDecoderIsJSONUnmarshalOnMutations(t *testing.T) {
	var docs [][]byte
	for _, b := range fixtures(t) {
		docs = append(docs, b)
	}
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte(" \t\n\r\"\\/u0aA{}[],:-.eE+\x00\x01\x1f\x7f\x80\xffbfnrt")
	mutations := 5000
	if race.Enabled || testing.Short() {
		// One goroutine: the race detector checks nothing here and makes
		// each 6x slower. -short (make test-short) takes the same first
		// 1000; make test runs all 5000 without the race detector
		// (scripts/race-free-packages.txt).
		mutations = 1000
	}
	for range mutations {
		b := append([]byte(nil), docs[r.IntN(len(docs))]...)
		if r.IntN(3) == 0 && len(b) > 200 { // a window: small documents
			s := r.IntN(len(b) - 100)
			b = b[s : s+r.IntN(100)]
		}
		for k := r.IntN(4); k >= 0 && len(b) > 0; k-- {
			i, c := r.IntN(len(b)), alphabet[r.IntN(len(alphabet))]
			switch r.IntN(3) {
			case 0:
				b[i] = c
			case 1:
				b = append(b[:i], append([]byte{c}, b[i:]...)...)
			default:
				b = append(b[:i], b[i+1:]...)
			}
		}
		decodes(t, b)
	}
}

func FuzzDecoder(f *testing.F) {
	for _, payload := range fixtures(f) {
		f.Add(payload)
	}
	f.Add([]byte(`{"action":"a","number":1,"pull_request":{"head":{"sha":"s","ref":"r"}}}`))
	f.Fuzz(func(t *testing.T, payload []byte) { decodes(t, payload) })
}

func BenchmarkDecodePullRequest(b *testing.B) {
	payload, err := os.ReadFile(filepath.Join("..", "githubtest", "testdata", "webhooks", "pull_request", "opened.payload.json"))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("Decoder", func(b *testing.B) {
		d := hook.NewDecoder[hook.PullRequestEvent]()
		b.SetBytes(int64(len(payload)))
		for b.Loop() {
			var e hook.PullRequestEvent
			if err := d.Decode(payload, &e); err != nil || e.PullRequest.Head.SHA == "" {
				b.Fatal(err, e)
			}
		}
	})
	b.Run("json.Unmarshal", func(b *testing.B) {
		b.SetBytes(int64(len(payload)))
		for b.Loop() {
			var e hook.PullRequestEvent
			if err := json.Unmarshal(payload, &e); err != nil {
				b.Fatal(err)
			}
		}
	})
}
