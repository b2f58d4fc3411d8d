package githubtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode"
)

// graphql answers the GraphQL MergeGuard sends: blame,
//
//	repository(owner, name) { object(expression|oid) { ... on Commit {
//	  blame(path) { ranges { startingLine endingLine age commit { ... } } } } } }
//
// a pull request's review threads (threads.go),
//
//	repository(owner, name) { pullRequest(number) {
//	  reviewThreads(first, after) { nodes { ... comments(first) { ... } } pageInfo { ... } } } }
//
// and the mutations resolveReviewThread and unresolveReviewThread.
// It builds the full answer and keeps only the fields the query selects,
// as GitHub does (githubv4 rejects fields it did not ask for).
func (s *Server) graphql(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Query     string         `json:"query"`
		Variables map[string]any `json:"variables"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"message": "Problems parsing JSON"})
		return
	}
	sel, err := parseSelection(req.Query)
	var data map[string]any
	var errs []any
	switch {
	case err != nil:
	case mutationRE.MatchString(req.Query) && strings.Contains(req.Query, "unresolveReviewThread("):
		data, errs = s.resolveData("unresolveReviewThread", req.Variables)
	case mutationRE.MatchString(req.Query) && strings.Contains(req.Query, "resolveReviewThread("):
		data, errs = s.resolveData("resolveReviewThread", req.Variables)
	case mutationRE.MatchString(req.Query):
		err = fmt.Errorf("unsupported mutation")
	case strings.Contains(req.Query, "reviewThreads("):
		data, errs = s.threadsData(req.Query, req.Variables)
	case strings.Contains(req.Query, "blame("):
		var gqlErr string
		if data, gqlErr = s.blameData(req.Variables); gqlErr != "" {
			errs = []any{map[string]any{"type": "NOT_FOUND", "message": gqlErr}}
		}
	default:
		err = fmt.Errorf("unsupported query")
	}
	if err != nil {
		writeJSON(w, http.StatusOK, map[string]any{"errors": []any{map[string]any{"message": fmt.Sprintf("githubtest: unsupported query: %v", err)}}})
		return
	}
	out := map[string]any{"data": nil}
	if data != nil {
		out["data"] = prune(data, sel)
	}
	if len(errs) > 0 {
		out["errors"] = errs
	}
	writeJSON(w, http.StatusOK, out)
}

// blameData is the full answer of a blame query, and a GraphQL error text.
func (s *Server) blameData(vars map[string]any) (map[string]any, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	owner, _ := vars["owner"].(string)
	name, _ := vars["name"].(string)
	path, _ := vars["path"].(string)
	rp := s.lookup(owner, name)
	if rp == nil {
		return map[string]any{"repository": nil}, fmt.Sprintf("Could not resolve to a Repository with the name '%s/%s'.", owner, name)
	}
	sha := ""
	for k, v := range vars {
		if str, ok := v.(string); ok && k != "owner" && k != "name" && k != "path" {
			if c, ok := rp.resolve(str); ok {
				sha = c
			}
		}
	}
	if sha == "" {
		return map[string]any{"repository": map[string]any{"object": nil}}, ""
	}
	blob, ok := rp.commits[sha][path]
	if !ok {
		return map[string]any{"repository": map[string]any{"object": map[string]any{"blame": nil}}},
			fmt.Sprintf("Could not resolve file for path '%s'.", path)
	}
	ranges, ok := rp.blame[sha+"\x00"+path]
	if !ok {
		n := max(strings.Count(rp.blobs[blob], "\n"), 1)
		ranges = []BlameRange{{StartingLine: 1, EndingLine: n, Commit: rp.commitInfo(sha)}}
	}
	var list []any
	for _, br := range ranges {
		c := br.Commit
		date := c.Date.UTC().Format(time.RFC3339)
		headline, _, _ := strings.Cut(c.Message, "\n")
		list = append(list, map[string]any{
			"startingLine": br.StartingLine,
			"endingLine":   br.EndingLine,
			"age":          1,
			"commit": map[string]any{
				"oid":             c.SHA,
				"abbreviatedOid":  c.SHA[:min(7, len(c.SHA))],
				"message":         c.Message,
				"messageHeadline": headline,
				"authoredDate":    date,
				"committedDate":   date,
				"author": map[string]any{
					"name":  c.Author,
					"email": c.Author + "@users.noreply.github.com",
					"date":  date,
					"user":  map[string]any{"login": c.Author},
				},
			},
		})
	}
	return map[string]any{"repository": map[string]any{"object": map[string]any{
		"__typename": "Commit",
		"oid":        sha,
		"blame":      map[string]any{"ranges": list},
	}}}, ""
}

// commitInfo describes a commit of a pull request, or a bare sha.
func (rp *repo) commitInfo(sha string) Commit {
	for _, p := range rp.pulls {
		for _, c := range p.pr.Commits {
			if c.SHA == sha {
				return c
			}
		}
	}
	return Commit{SHA: sha, Message: "commit " + sha, Author: "octocat", Date: time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)}
}

// selection is a parsed GraphQL selection set: field name → sub-selection
// (nil for a leaf). Inline fragments are merged into their parent.
type selection map[string]selection

// parseSelection parses the outermost selection set of a query.
func parseSelection(q string) (selection, error) {
	i := strings.IndexByte(q, '{')
	if i < 0 {
		return nil, fmt.Errorf("no selection set")
	}
	p := &selParser{toks: tokenize(q[i:])}
	return p.set()
}

type selParser struct {
	toks []string
	pos  int
}

func (p *selParser) next() string {
	if p.pos >= len(p.toks) {
		return ""
	}
	p.pos++
	return p.toks[p.pos-1]
}

func (p *selParser) peek() string {
	if p.pos >= len(p.toks) {
		return ""
	}
	return p.toks[p.pos]
}

func (p *selParser) set() (selection, error) {
	if p.next() != "{" {
		return nil, fmt.Errorf("want {")
	}
	out := selection{}
	for {
		switch tok := p.next(); tok {
		case "":
			return nil, fmt.Errorf("unterminated selection set")
		case "}":
			return out, nil
		case "...":
			if p.next() != "on" {
				return nil, fmt.Errorf("only inline fragments are supported")
			}
			p.next() // type name
			sub, err := p.set()
			if err != nil {
				return nil, err
			}
			for k, v := range sub {
				out[k] = v
			}
		default:
			name := tok
			if p.peek() == ":" { // alias: field
				p.next()
				name = p.next()
			}
			if p.peek() == "(" {
				for depth := 0; ; {
					t := p.next()
					switch t {
					case "(":
						depth++
					case ")":
						depth--
					}
					if depth == 0 || t == "" {
						break
					}
				}
			}
			var sub selection
			if p.peek() == "{" {
				var err error
				if sub, err = p.set(); err != nil {
					return nil, err
				}
			}
			out[name] = sub
		}
	}
}

// tokenize splits a query into names, punctuation and "...", dropping
// whitespace, commas and string contents' structure.
func tokenize(q string) []string {
	var toks []string
	for i := 0; i < len(q); {
		c := rune(q[i])
		switch {
		case unicode.IsSpace(c) || c == ',':
			i++
		case strings.HasPrefix(q[i:], "..."):
			toks = append(toks, "...")
			i += 3
		case c == '"':
			j := i + 1
			for j < len(q) && q[j] != '"' {
				if q[j] == '\\' {
					j++
				}
				j++
			}
			toks = append(toks, q[i:min(j+1, len(q))])
			i = j + 1
		case strings.ContainsRune("{}():$!=[]@", c):
			toks = append(toks, string(c))
			i++
		default:
			j := i
			for j < len(q) && (q[j] == '_' || unicode.IsLetter(rune(q[j])) || unicode.IsDigit(rune(q[j])) || q[j] == '-' || q[j] == '.') {
				j++
			}
			if j == i {
				j++
			}
			toks = append(toks, q[i:j])
			i = j
		}
	}
	return toks
}

// prune keeps the fields of v that sel selects.
func prune(v any, sel selection) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(sel))
		for k, sub := range sel {
			val, ok := x[k]
			if !ok {
				continue
			}
			if sub == nil {
				out[k] = val
			} else {
				out[k] = prune(val, sub)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = prune(e, sel)
		}
		return out
	}
	return v
}
