package storetest

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mergeguard/mergeguard/server/store"
)

func TestURLGivesAMigratedDatabaseDroppedAfterTheTest(t *testing.T) {
	var url string
	t.Run("user", func(t *testing.T) {
		url = URL(t)
		version, dirty, err := store.MigrateVersion(t.Context(), url)
		if err != nil || version == 0 || dirty {
			t.Errorf("MigrateVersion = %d, %t, %v; want a clean migrated database", version, dirty, err)
		}
		s := New(t)
		if err := s.Ping(t.Context()); err != nil {
			t.Error(err)
		}
	})
	conn, err := pgx.Connect(t.Context(), url)
	if err == nil {
		conn.Close(t.Context())
		t.Fatalf("database %s still exists after its test", url)
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "3D000" { // invalid_catalog_name
		t.Errorf("connecting to the dropped database: %v, want database does not exist", err)
	}
}

// fatalTB records the message of Fatal and stops its goroutine, as
// testing.T does.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}

func (f *fatalTB) Fatal(args ...any) {
	f.msg = fmt.Sprint(args...)
	runtime.Goexit()
}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func TestServerURLFromTheEnvironment(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    string
		wantMsg string
	}{
		{"test variable first", map[string]string{"MERGEGUARD_TEST_DATABASE_URL": "postgres://a/x", "DATABASE_URL": "postgres://b/y"}, "postgres://a/x", ""},
		{"falls back to DATABASE_URL", map[string]string{"DATABASE_URL": "postgres://b/y"}, "postgres://b/y", ""},
		{"neither set", nil, "", "run `make test`, or set MERGEGUARD_TEST_DATABASE_URL"},
		{"not a URL", map[string]string{"MERGEGUARD_TEST_DATABASE_URL": "host=db dbname=x"}, "", "must be a postgres:// URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := &fatalTB{TB: t}
			var got string
			done := make(chan struct{})
			go func() {
				defer close(done)
				got = serverURL(tb, func(k string) string { return tt.env[k] }).String()
			}()
			<-done
			if got != tt.want {
				t.Errorf("serverURL = %q, want %q", got, tt.want)
			}
			if (tt.wantMsg == "") != (tb.msg == "") || !strings.Contains(tb.msg, tt.wantMsg) {
				t.Errorf("fatal message %q, want one containing %q", tb.msg, tt.wantMsg)
			}
		})
	}
}
