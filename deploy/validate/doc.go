// Package validate checks MergeGuard's deployment files without a cluster or
// a Docker engine: it lints and renders the Helm chart with Helm's own Go
// packages and decodes every rendered manifest strictly into the Kubernetes
// API types, loads docker-compose.yml with the Compose specification's loader,
// parses the Dockerfile and .dockerignore with BuildKit's parsers, and checks
// the GitHub App manifest.
//
// It is a separate Go module so that the application's module does not depend
// on Helm and Kubernetes. Run it with `go test ./...` from deploy/validate.
package validate
