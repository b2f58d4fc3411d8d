package storetest

import (
	"crypto/rand"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/mergeguard/mergeguard/migrations"
	"github.com/mergeguard/mergeguard/server/store"
)

// BenchmarkURL is the cost of one migrated database of a test as URL gives
// it: a free database claimed (a copy of the template when none is free),
// its schema state, and its recycling.
func BenchmarkURL(b *testing.B) {
	server := serverURL(b, os.Getenv)
	tmpl, err := templateName(migrations.FS)
	if err != nil {
		b.Fatal(err)
	}
	URL(b) // the template exists before the clock runs
	b.ResetTimer()
	for b.Loop() {
		name := "mergeguard_test_" + strings.ToLower(rand.Text())
		if err := cloneTemplate(b.Context(), server, tmpl, name); err != nil {
			b.Fatal(err)
		}
		if err := release(server, tmpl, name); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCopy is the cost of a database copied from the template, and
// its drop: what each test paid before databases were recycled.
func BenchmarkCopy(b *testing.B) {
	server := serverURL(b, os.Getenv)
	tmpl, err := templateName(migrations.FS)
	if err != nil {
		b.Fatal(err)
	}
	URL(b) // the template exists before the clock runs
	admin, err := pgx.Connect(b.Context(), server.String())
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = admin.Close(b.Context()) }()
	b.ResetTimer()
	for b.Loop() {
		name := "mergeguard_test_" + strings.ToLower(rand.Text())
		if _, err := admin.Exec(b.Context(), "CREATE DATABASE "+name+" TEMPLATE "+tmpl); err != nil {
			b.Fatal(err)
		}
		drop(b, server.String(), name)
	}
}

// BenchmarkMigrateEmpty is what a migrated database cost without the
// template: an empty database migrated up, and its drop.
func BenchmarkMigrateEmpty(b *testing.B) {
	server := serverURL(b, os.Getenv)
	admin, err := pgx.Connect(b.Context(), server.String())
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = admin.Close(b.Context()) }()
	for b.Loop() {
		name := "mergeguard_test_" + strings.ToLower(rand.Text())
		if _, err := admin.Exec(b.Context(), "CREATE DATABASE "+name); err != nil {
			b.Fatal(err)
		}
		if err := store.MigrateUp(b.Context(), databaseURL(server, name)); err != nil {
			b.Fatal(err)
		}
		drop(b, server.String(), name)
	}
}
