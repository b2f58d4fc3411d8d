package github

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/shurcooL/githubv4"

	"github.com/mergeguard/mergeguard/review"
)

// blameRange attributes lines Start..End of a file to a commit.
type blameRange struct {
	Start, End int
	Line       review.BlameLine
}

// blameQuery is GitHub's GraphQL blame of one file at one commit.
type blameQuery struct {
	Repository struct {
		Object struct {
			Commit struct {
				Blame struct {
					Ranges []struct {
						StartingLine int
						EndingLine   int
						Commit       struct {
							Oid          githubv4.GitObjectID
							Message      string
							AuthoredDate githubv4.DateTime
							Author       struct {
								Name string
							}
						}
					}
				} `graphql:"blame(path: $path)"`
			} `graphql:"... on Commit"`
		} `graphql:"object(expression: $expression)"`
	} `graphql:"repository(owner: $owner, name: $name)"`
}

// Blame tells who last changed a line at the head commit. The file's blame
// is one GraphQL query, made once per file. Without a GraphQL client it is
// review.ErrUnsupported; a missing file or a line outside it is
// review.ErrNotFound.
//
// GitHub API docs: https://docs.github.com/graphql/reference/objects#blame
func (s *Source) Blame(ctx context.Context, path string, line int) (review.BlameLine, error) {
	if s.v4 == nil {
		return review.BlameLine{}, fmt.Errorf("blame %s: %w", path, review.ErrUnsupported)
	}
	sha, err := s.revisionSHA(ctx, review.Head)
	if err != nil {
		return review.BlameLine{}, err
	}
	ranges, err := s.blame.get(ctx, path, func() ([]blameRange, error) {
		var q blameQuery
		err := s.v4.Query(ctx, &q, map[string]any{
			"owner":      githubv4.String(s.owner),
			"name":       githubv4.String(s.repo),
			"expression": githubv4.String(sha),
			"path":       githubv4.String(path),
		})
		if err != nil {
			// githubv4 returns only the first GraphQL error's message.
			if strings.Contains(err.Error(), "Could not resolve") {
				return nil, fmt.Errorf("blame %s at %s: %w: %w", path, sha, review.ErrNotFound, err)
			}
			return nil, fmt.Errorf("blame %s at %s: %w", path, sha, err)
		}
		var out []blameRange
		for _, r := range q.Repository.Object.Commit.Blame.Ranges {
			out = append(out, blameRange{
				Start: r.StartingLine,
				End:   r.EndingLine,
				Line: review.BlameLine{
					Author:    r.Commit.Author.Name,
					Date:      r.Commit.AuthoredDate.In(time.UTC),
					CommitSHA: string(r.Commit.Oid),
					Message:   r.Commit.Message,
				},
			})
		}
		return out, nil
	})
	if err != nil {
		return review.BlameLine{}, err
	}
	for _, r := range ranges {
		if r.Start <= line && line <= r.End {
			return r.Line, nil
		}
	}
	return review.BlameLine{}, fmt.Errorf("blame %s line %d: %w", path, line, review.ErrNotFound)
}
