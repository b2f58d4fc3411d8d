package githubtest

import (
	"archive/tar"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"maps"
	"net/http"
	"path"
	"slices"
	"strings"
	"time"
)

const (
	docTree     = "https://docs.github.com/rest/git/trees#get-a-tree"
	docBlob     = "https://docs.github.com/rest/git/blobs#get-a-blob"
	docContents = "https://docs.github.com/rest/repos/contents#get-repository-content"
	docTarball  = "https://docs.github.com/rest/repos/contents#download-a-repository-archive-tar"
)

// maxTreeEntries is how many entries a recursive tree lists before GitHub
// sets truncated (100,000 entries or 7 MB).
const maxTreeEntries = 100000

// SetTreeLimit lowers the number of entries a recursive tree lists before
// it is truncated, to test the truncated case.
func (s *Server) SetTreeLimit(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.treeLimit = n
}

// resolve turns a ref (a commit sha, or the head or base branch of a pull
// request) into a commit sha. s.mu must be held.
func (rp *repo) resolve(ref string) (string, bool) {
	if _, ok := rp.commits[ref]; ok {
		return ref, true
	}
	for _, p := range rp.pulls {
		switch ref {
		case p.pr.HeadRef, "refs/heads/" + p.pr.HeadRef:
			return p.pr.HeadSHA, true
		case p.pr.BaseRef, "refs/heads/" + p.pr.BaseRef:
			return p.pr.BaseSHA, true
		}
	}
	return "", false
}

func (s *Server) tree(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, ok := s.requestRepo(w, r, docTree)
	if !ok {
		return
	}
	sha := r.PathValue("tree_sha")
	td, ok := rp.treeDirs[sha]
	if !ok {
		commit, found := rp.resolve(sha)
		if !found {
			writeNotFound(w, docTree)
			return
		}
		td = treeDir{commit: commit}
	}
	files := rp.commits[td.commit]
	prefix := ""
	if td.dir != "" {
		prefix = td.dir + "/"
	}
	_, recursive := r.URL.Query()["recursive"]
	limit := s.treeLimit
	if limit <= 0 {
		limit = maxTreeEntries
	}
	var entries []any
	truncated := false
	add := func(e map[string]any) {
		if len(entries) >= limit {
			truncated = true
			return
		}
		entries = append(entries, e)
	}
	for _, dir := range dirsOf(files) {
		rel, ok := strings.CutPrefix(dir, prefix)
		if !ok || dir == td.dir || (!recursive && strings.Contains(rel, "/")) {
			continue
		}
		sub := treeSHA(td.commit, dir)
		add(map[string]any{"path": rel, "mode": "040000", "type": "tree", "sha": sub,
			"url": fmt.Sprintf("%srepos/%s/%s/git/trees/%s", s.URL(), rp.owner, rp.name, sub)})
	}
	for _, p := range slices.Sorted(maps.Keys(files)) {
		rel, ok := strings.CutPrefix(p, prefix)
		if !ok || (!recursive && strings.Contains(rel, "/")) {
			continue
		}
		blob := files[p]
		add(map[string]any{"path": rel, "mode": "100644", "type": "blob", "sha": blob, "size": len(rp.blobs[blob]),
			"url": fmt.Sprintf("%srepos/%s/%s/git/blobs/%s", s.URL(), rp.owner, rp.name, blob)})
	}
	slices.SortStableFunc(entries, func(a, b any) int {
		return strings.Compare(a.(map[string]any)["path"].(string), b.(map[string]any)["path"].(string))
	})
	m := s.example("git-tree-response-recursively-retrieving-a-tree.json")
	root := treeSHA(td.commit, td.dir)
	m["sha"], m["tree"], m["truncated"] = root, entries, truncated
	m["url"] = fmt.Sprintf("%srepos/%s/%s/git/trees/%s", s.URL(), rp.owner, rp.name, root)
	writeJSON(w, http.StatusOK, m)
}

func (s *Server) blob(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, ok := s.requestRepo(w, r, docBlob)
	if !ok {
		return
	}
	sha := r.PathValue("file_sha")
	content, ok := rp.blobs[sha]
	if !ok {
		writeNotFound(w, docBlob)
		return
	}
	if strings.Contains(r.Header.Get("Accept"), ".raw") {
		w.Header().Set("Content-Type", "application/vnd.github.raw")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(content))
		return
	}
	m := s.example("blob.json")
	m["content"], m["encoding"], m["sha"], m["size"] = base64.StdEncoding.EncodeToString([]byte(content)), "base64", sha, len(content)
	m["url"] = fmt.Sprintf("%srepos/%s/%s/git/blobs/%s", s.URL(), rp.owner, rp.name, sha)
	writeJSON(w, http.StatusOK, m)
}

// maxContentsJSONBytes is the largest file repos/get-content answers as
// JSON; larger files (up to 100 MB) only come with the raw media type.
const maxContentsJSONBytes = 1 << 20

// contents answers repos/get-content as GitHub does for files and
// directories. A file comes as JSON with base64 content, or as its bytes
// with the raw media type (application/vnd.github.raw); above 1 MB only
// the raw media type serves it and JSON is refused with 403 too_large. A
// directory comes as a JSON list whatever the media type. A path the
// commit does not hold is 404.
func (s *Server) contents(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, ok := s.requestRepo(w, r, docContents)
	if !ok {
		return
	}
	ref := r.URL.Query().Get("ref")
	if ref == "" {
		ref = "main"
	}
	commit, ok := rp.resolve(ref)
	if !ok {
		writeNotFound(w, docContents)
		return
	}
	files := rp.commits[commit]
	p := strings.Trim(r.PathValue("path"), "/")
	if blob, ok := files[p]; ok {
		content := rp.blobs[blob]
		if strings.Contains(r.Header.Get("Accept"), ".raw") {
			w.Header().Set("Content-Type", "application/vnd.github.raw; charset=utf-8")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write([]byte(content))
			return
		}
		if len(content) > maxContentsJSONBytes {
			writeJSON(w, http.StatusForbidden, map[string]any{
				"message":           "This API returns blobs up to 1 MB in size. The requested blob is too large to fetch via the API, but you can use the Git Data API to request blobs up to 100 MB in size.",
				"errors":            []any{map[string]any{"resource": "Blob", "field": "data", "code": "too_large"}},
				"documentation_url": docContents,
				"status":            "403",
			})
			return
		}
		m := s.example("content-file-response-if-content-is-a-file.json")
		m["type"], m["encoding"], m["size"], m["name"], m["path"], m["sha"] = "file", "base64", len(content), path.Base(p), p, blob
		m["content"] = base64.StdEncoding.EncodeToString([]byte(content))
		m["url"] = fmt.Sprintf("%srepos/%s/%s/contents/%s?ref=%s", s.URL(), rp.owner, rp.name, p, ref)
		writeJSON(w, http.StatusOK, m)
		return
	}
	var list []map[string]any
	for _, f := range slices.Sorted(maps.Keys(files)) {
		rel, ok := strings.CutPrefix(f, p+"/")
		if p == "" {
			rel, ok = f, true
		}
		if !ok {
			continue
		}
		name, _, isDir := strings.Cut(rel, "/")
		entry := map[string]any{"name": name, "path": strings.TrimPrefix(p+"/"+name, "/"), "type": "file", "sha": files[f], "size": len(rp.blobs[files[f]])}
		if isDir {
			entry["type"], entry["sha"], entry["size"] = "dir", treeSHA(commit, strings.TrimPrefix(p+"/"+name, "/")), 0
		}
		if len(list) == 0 || list[len(list)-1]["name"] != name {
			list = append(list, entry)
		}
	}
	if list == nil {
		writeNotFound(w, docContents)
		return
	}
	writeJSON(w, http.StatusOK, list)
}

// tarball redirects to the archive download, as GitHub redirects to
// codeload.github.com.
func (s *Server) tarball(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, ok := s.requestRepo(w, r, docTarball)
	if !ok {
		return
	}
	commit, ok := rp.resolve(r.PathValue("ref"))
	if !ok {
		writeNotFound(w, docTarball)
		return
	}
	w.Header().Set("Location", fmt.Sprintf("%s/_codeload/%s/%s/legacy.tar.gz/%s", s.srv.URL, rp.owner, rp.name, commit))
	w.WriteHeader(http.StatusFound)
}

// codeload serves a commit's files as git archive does: a gzipped tar with
// a pax global header carrying the commit id and every path under
// "<owner>-<repo>-<short sha>/".
func (s *Server) codeload(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	rp := s.lookup(r.PathValue("owner"), r.PathValue("repo"))
	sha := r.PathValue("sha")
	var files map[string]string
	if rp != nil {
		if tree, ok := rp.commits[sha]; ok {
			files = make(map[string]string, len(tree))
			for p, blob := range tree {
				files[p] = rp.blobs[blob]
			}
		}
	}
	s.mu.Unlock()
	if files == nil {
		http.Error(w, "Not Found", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/x-gzip")
	w.WriteHeader(http.StatusOK)
	zw := gzip.NewWriter(w)
	tw := tar.NewWriter(zw)
	mtime := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	root := fmt.Sprintf("%s-%s-%s/", rp.owner, rp.name, sha[:min(7, len(sha))])
	_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeXGlobalHeader, Name: "pax_global_header", PAXRecords: map[string]string{"comment": sha}, Format: tar.FormatPAX})
	_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: root, Mode: 0o775, ModTime: mtime})
	for _, dir := range dirsOf(files) {
		if dir != "" {
			_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: root + dir + "/", Mode: 0o775, ModTime: mtime})
		}
	}
	for _, p := range slices.Sorted(maps.Keys(files)) {
		_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: root + p, Mode: 0o664, Size: int64(len(files[p])), ModTime: mtime})
		_, _ = tw.Write([]byte(files[p]))
	}
	_ = tw.Close()
	_ = zw.Close()
}
