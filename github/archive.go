package github

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	gh "github.com/google/go-github/v60/github"

	"github.com/mergeguard/mergeguard/review"
)

// ErrArchiveTooLarge is returned by Preload when the head archive is above
// the configured caps; head files are then read one by one.
var ErrArchiveTooLarge = errors.New("repository archive too large")

// archive is the head commit's files, from its tarball; nil when the
// tarball was above the caps.
type archive struct {
	files map[string][]byte
}

// Preload fetches the head commit's tarball once (one API call, then a
// download from the address GitHub redirects to) and serves every later
// head ReadFile from it, so that reading many files — as searching the
// repository does — costs no further calls. It returns ErrArchiveTooLarge,
// and changes nothing, when the archive is above SourceOptions'
// ArchiveMaxBytes or ArchiveMaxFiles; that answer is kept.
//
// GitHub API docs: https://docs.github.com/rest/repos/contents#download-a-repository-archive-tar
func (s *Source) Preload(ctx context.Context) error {
	a, err := s.archive.get(ctx, struct{}{}, func() (*archive, error) {
		sha, err := s.revisionSHA(ctx, review.Head)
		if err != nil {
			return nil, err
		}
		return s.fetchArchive(ctx, sha)
	})
	if err != nil {
		return err
	}
	if a == nil {
		return fmt.Errorf("preload %s: %w", s, ErrArchiveTooLarge)
	}
	return nil
}

func (s *Source) fetchArchive(ctx context.Context, sha string) (*archive, error) {
	// GitHub answers 302 to a signed codeload address; a renamed
	// repository answers 301 first, which go-github follows once.
	loc, _, err := s.client.Repositories.GetArchiveLink(ctx, s.owner, s.repo, gh.Tarball, &gh.RepositoryContentGetOptions{Ref: sha}, 1)
	if err != nil {
		return nil, fmt.Errorf("get archive link of %s at %s: %w", s, sha, apiError(err))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, loc.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("download archive of %s: %w", s, err)
	}
	resp, err := s.opts.ArchiveClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("download archive of %s: %w", s, err)
	}
	defer func() { _ = resp.Body.Close() }() // read-only: nothing to learn from a close error
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("download archive of %s: %s", s, resp.Status)
	}
	if resp.ContentLength > s.opts.ArchiveMaxBytes {
		return nil, nil
	}
	a, err := readTarball(resp.Body, s.opts.ArchiveMaxBytes, s.opts.ArchiveMaxFiles)
	if err != nil {
		return nil, fmt.Errorf("download archive of %s: %w", s, err)
	}
	return a, nil
}

// readTarball reads a gzipped tarball as GitHub makes it (every path under
// one top directory, "<owner>-<repo>-<sha>/") into memory. It returns nil
// when the download or the files' total size is above maxBytes, or their
// number above maxFiles.
func readTarball(r io.Reader, maxBytes int64, maxFiles int) (*archive, error) {
	cr := &countingReader{r: io.LimitReader(r, maxBytes+1)}
	zr, err := gzip.NewReader(cr)
	if err != nil {
		return nil, fmt.Errorf("read tarball: %w", err)
	}
	defer func() { _ = zr.Close() }() // read-only: nothing to learn from a close error
	tr := tar.NewReader(zr)
	a := &archive{files: make(map[string][]byte)}
	var total int64
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return a, nil
		}
		if err != nil {
			if cr.n > maxBytes {
				return nil, nil // the download was cut at the size limit
			}
			return nil, fmt.Errorf("read tarball: %w", err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		_, name, ok := strings.Cut(h.Name, "/")
		if !ok || name == "" {
			continue
		}
		total += h.Size
		if total > maxBytes || len(a.files) >= maxFiles {
			return nil, nil
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			if cr.n > maxBytes {
				return nil, nil
			}
			return nil, fmt.Errorf("read tarball %s: %w", h.Name, err)
		}
		a.files[name] = b
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
