// Package buildcheck runs BuildKit's build checks on a Dockerfile, the
// rules `docker build --check` runs, offline: nothing is built and no image
// is pulled. It is the lint.BuildChecks of the Dockerfile linter
// (lint.Dockerfile), apart from package lint because BuildKit's converter
// brings about 300 packages (grpc, containerd): only the composition root
// and this package's tests link them, not every test binary that links
// the linters (docs/architecture.md).
package buildcheck

import (
	"context"
	"fmt"

	"github.com/moby/buildkit/client/llb"
	"github.com/moby/buildkit/client/llb/sourceresolver"
	"github.com/moby/buildkit/frontend/dockerfile/dockerfile2llb"
	"github.com/opencontainers/go-digest"

	"github.com/mergeguard/mergeguard/review/lint"
)

// Run checks the Dockerfile at path, content. It implements
// lint.BuildChecks.
func Run(ctx context.Context, path string, content []byte) (lint.BuildCheck, error) {
	scratch := llb.Scratch()
	def, err := scratch.Marshal(ctx)
	if err != nil {
		return lint.BuildCheck{}, fmt.Errorf("source map: %w", err)
	}
	sm := llb.NewSourceMap(&scratch, path, "Dockerfile", content)
	sm.Definition = def // the lint results name their source by it
	res, err := dockerfile2llb.DockerfileLint(ctx, content, dockerfile2llb.ConvertOpt{
		SourceMap: sm, MetaResolver: offline{},
	})
	if err != nil {
		return lint.BuildCheck{}, err
	}
	var out lint.BuildCheck
	for _, w := range res.Warnings {
		line := 0
		if w.Location != nil && len(w.Location.Ranges) > 0 {
			line = int(w.Location.Ranges[0].Start.Line)
		}
		out.Warnings = append(out.Warnings, lint.BuildWarning{Rule: w.RuleName, Detail: w.Detail, URL: w.URL, Line: line})
	}
	if e := res.Error; e != nil {
		out.Error = e.Message
		if len(e.Location.Ranges) > 0 {
			out.ErrorLine = int(e.Location.Ranges[0].Start.Line)
		}
	}
	return out, nil
}

// offline answers BuildKit's base-image lookups without the network: every
// base image is an empty linux image. The checks that need an image's real
// configuration (its platform, its environment) then say nothing.
type offline struct{}

func (offline) ResolveImageConfig(_ context.Context, ref string, _ sourceresolver.Opt) (string, digest.Digest, []byte, error) {
	return ref, "", []byte(`{"os":"linux","rootfs":{"type":"layers"}}`), nil
}
