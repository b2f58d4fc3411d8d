package api

import (
	"bytes"
	"encoding/json"
	"regexp"
)

// redactor removes internal addresses from the errors the API shows: a
// run's error and the "error" of its events can name a model server, a
// GitHub Enterprise host or the database, with URLs and host:port. Every
// URL becomes "[url]" and every IP address, host:port (of a dotted name or
// localhost) and looked-up host name "[address]"; the full error stays in
// the database and the log.
type redactor struct {
	urls, addrs, hosts *regexp.Regexp
}

func newRedactor() redactor {
	const label = `[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?`
	return redactor{
		urls: regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s"'<>]*[^\s"'<>.,:;)]`), // not the sentence's punctuation
		addrs: regexp.MustCompile(`\[[0-9A-Fa-f:.%]+\](?::\d+)?` + // [v6]:port
			`|\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b` + // v4[:port]
			`|\blocalhost:\d{1,5}\b|\b` + label + `(?:\.` + label + `)+:\d{1,5}\b`), // host:port
		// Host names without a port: "lookup db.internal", pgx's "host=db".
		hosts: regexp.MustCompile(`\b(lookup |host=)[^\s:;,()'"]+`),
	}
}

// text is msg without URLs and addresses.
func (x redactor) text(msg string) string {
	msg = x.urls.ReplaceAllString(msg, "[url]")
	msg = x.addrs.ReplaceAllString(msg, "[address]")
	return x.hosts.ReplaceAllString(msg, "${1}[address]")
}

// eventData is an event's data object with its "error" string, if any,
// redacted; other data passes unchanged.
func (x redactor) eventData(data json.RawMessage) json.RawMessage {
	if !bytes.Contains(data, []byte(`"error"`)) {
		return data
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return data
	}
	var msg string
	if err := json.Unmarshal(m["error"], &msg); err != nil {
		return data
	}
	red, err := json.Marshal(x.text(msg))
	if err != nil {
		return data
	}
	m["error"] = red
	out, err := json.Marshal(m)
	if err != nil {
		return data
	}
	return out
}
