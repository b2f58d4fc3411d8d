package validate

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/google/go-cmp/cmp"
)

// contractEnv lists the environment variables the binary reads
// (docs/architecture.md).
func contractEnv() []string {
	return []string{
		"DATABASE_URL",
		"GITHUB_APP_INTEGRATION_ID", "GITHUB_APP_WEBHOOK_SECRET", "GITHUB_APP_PRIVATE_KEY",
		"GITHUB_V3_API_URL", "GITHUB_V4_API_URL",
		"OPENAI_API_KEY", "OPENAI_BASE_URL", "MERGEGUARD_MODEL",
		"MERGEGUARD_ADDR", "MERGEGUARD_API_TOKEN",
	}
}

// loadCompose loads deploy/docker-compose.yml as `docker compose config`
// does, in a copy of the deploy folder whose .env is the given text, so a
// developer's own deploy/.env never leaks into the test.
func loadCompose(t *testing.T, dotenv string) *types.Project {
	t.Helper()
	compose, err := os.ReadFile("../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "deploy")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "docker-compose.yml")
	if err := os.WriteFile(file, compose, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte(dotenv), 0o600); err != nil {
		t.Fatal(err)
	}
	opts, err := cli.NewProjectOptions([]string{file},
		cli.WithWorkingDirectory(dir),
		cli.WithEnvFiles(filepath.Join(dir, ".env")),
		cli.WithDotEnv,
	)
	if err != nil {
		t.Fatal(err)
	}
	project, err := opts.LoadProject(t.Context())
	if err != nil {
		t.Fatalf("load docker-compose.yml: %v", err)
	}
	return project
}

func TestCompose(t *testing.T) {
	t.Parallel()
	example, err := os.ReadFile("../.env.example")
	if err != nil {
		t.Fatal(err)
	}
	p := loadCompose(t, string(example))

	if diff := cmp.Diff([]string{"mergeguard", "postgres"}, p.ServiceNames()); diff != "" {
		t.Fatalf("services (-want +got):\n%s", diff)
	}
	pg := p.Services["postgres"]
	if pg.Image != "postgres:15" {
		t.Errorf("postgres image = %q, want postgres:15", pg.Image)
	}
	if hc := pg.HealthCheck; hc == nil || hc.Disable || len(hc.Test) == 0 || !strings.Contains(strings.Join(hc.Test, " "), "pg_isready") {
		t.Errorf("postgres healthcheck = %+v, want pg_isready", hc)
	}
	for _, port := range pg.Ports {
		if port.HostIP != "127.0.0.1" {
			t.Errorf("postgres is published on %q, want loopback only", port.HostIP)
		}
	}

	mg := p.Services["mergeguard"]
	if dep, ok := mg.DependsOn["postgres"]; !ok || dep.Condition != types.ServiceConditionHealthy {
		t.Errorf("mergeguard depends_on postgres = %+v, want condition service_healthy", dep)
	}
	if b := mg.Build; b == nil || b.Context != filepath.Dir(p.WorkingDir) || b.Dockerfile != "deploy/Dockerfile" {
		t.Errorf("mergeguard build = %+v, want the repository root with deploy/Dockerfile", b)
	}
	if diff := cmp.Diff(types.ShellCommand{"serve"}, mg.Command); diff != "" {
		t.Errorf("mergeguard command (-want +got):\n%s", diff)
	}
	wantEnv := map[string]string{
		"MERGEGUARD_ADDR": ":8080",
		// Built from the POSTGRES_* values of .env.example.
		"DATABASE_URL":           "postgres://mergeguard:change-me@postgres:5432/mergeguard?sslmode=disable",
		"POSTGRES_PASSWORD":      "change-me",
		"OPENAI_API_KEY":         "",
		"GITHUB_APP_PRIVATE_KEY": "",
	}
	for name, want := range wantEnv {
		got, ok := mg.Environment[name]
		if !ok || got == nil || *got != want {
			t.Errorf("mergeguard env %s = %v, want %q", name, deref(got), want)
		}
	}
	if !slices.ContainsFunc(mg.Ports, func(p types.ServicePortConfig) bool { return p.Target == 8080 && p.Published == "8080" }) {
		t.Errorf("mergeguard ports = %+v, want 8080:8080", mg.Ports)
	}
	if !mg.ReadOnly || !slices.Equal(mg.CapDrop, []string{"ALL"}) || !slices.Contains(mg.SecurityOpt, "no-new-privileges:true") {
		t.Errorf("mergeguard hardening: read_only=%v cap_drop=%v security_opt=%v", mg.ReadOnly, mg.CapDrop, mg.SecurityOpt)
	}
}

func TestComposeExternalDatabase(t *testing.T) {
	t.Parallel()
	const url = "postgres://u:p@db.example.com:5432/mg?sslmode=require"
	p := loadCompose(t, "DATABASE_URL="+url+"\n")
	if got := deref(p.Services["mergeguard"].Environment["DATABASE_URL"]); got != url {
		t.Errorf("DATABASE_URL = %q, want the one from .env %q", got, url)
	}
}

// TestComposePrivateKeyQuoting checks the quoting .env.example and the
// operator guide prescribe for the PEM key: it reaches the app unchanged.
func TestComposePrivateKeyQuoting(t *testing.T) {
	t.Parallel()
	const pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAfakefakefake\nc2VjcmV0+/=\n-----END RSA PRIVATE KEY-----"
	p := loadCompose(t, "GITHUB_APP_PRIVATE_KEY=\""+pem+"\"\nGITHUB_APP_WEBHOOK_SECRET='a$b\"c'\n")
	env := p.Services["mergeguard"].Environment
	if got := deref(env["GITHUB_APP_PRIVATE_KEY"]); got != pem {
		t.Errorf("GITHUB_APP_PRIVATE_KEY = %q, want %q", got, pem)
	}
	if got := deref(env["GITHUB_APP_WEBHOOK_SECRET"]); got != `a$b"c` {
		t.Errorf("single-quoted GITHUB_APP_WEBHOOK_SECRET = %q, want it literal", got)
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
