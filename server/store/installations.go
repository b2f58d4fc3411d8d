package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Installation is a GitHub App installation.
type Installation struct {
	ID           int64
	AccountLogin string
	// AccountType is Organization or User.
	AccountType string
}

const upsertInstallation = `INSERT INTO installations (id, account_login, account_type)
	VALUES ($1, $2, $3)
	ON CONFLICT (id) DO UPDATE SET account_login = EXCLUDED.account_login,
	    account_type = EXCLUDED.account_type, deleted_at = NULL, updated_at = now()`

// UpsertInstallation records an installation, or updates it and undoes a
// deletion when it is known.
func (s *Store) UpsertInstallation(ctx context.Context, in Installation) error {
	if _, err := s.pool.Exec(ctx, upsertInstallation, in.ID, in.AccountLogin, in.AccountType); err != nil {
		return fmt.Errorf("upsert installation %d: %w", in.ID, err)
	}
	return nil
}

const setInstallationSuspended = `UPDATE installations
	SET suspended_at = CASE WHEN $2 THEN COALESCE(suspended_at, now()) END, updated_at = now()
	WHERE id = $1`

// SetInstallationSuspended suspends or unsuspends an installation; a
// suspended installation's repositories are not reviewed. ErrNotFound when
// the installation is unknown.
func (s *Store) SetInstallationSuspended(ctx context.Context, id int64, suspended bool) error {
	tag, err := s.pool.Exec(ctx, setInstallationSuspended, id, suspended)
	if err == nil && tag.RowsAffected() == 0 {
		err = ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("set installation %d suspended=%t: %w", id, suspended, err)
	}
	return nil
}

const deleteInstallation = `UPDATE installations SET deleted_at = COALESCE(deleted_at, now()), updated_at = now()
	WHERE id = $1`

// DeleteInstallation marks an installation deleted (its history stays).
// ErrNotFound when the installation is unknown.
func (s *Store) DeleteInstallation(ctx context.Context, id int64) error {
	tag, err := s.pool.Exec(ctx, deleteInstallation, id)
	if err == nil && tag.RowsAffected() == 0 {
		err = ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("delete installation %d: %w", id, err)
	}
	return nil
}

// Repository is a repository an installation gives access to.
type Repository struct {
	ID int64
	// FullName is owner/name.
	FullName string
	Private  bool
}

const (
	// A live repository of the same name but another id is gone (deleted and
	// recreated, or renamed away): retire it so the name is free.
	retireSameName = `UPDATE repositories SET removed_at = now(), updated_at = now()
		WHERE lower(full_name) = lower($2) AND id <> $1 AND removed_at IS NULL`

	upsertRepository = `INSERT INTO repositories (id, installation_id, full_name, private)
		VALUES ($1, $2, $3, $4)
		ON CONFLICT (id) DO UPDATE SET installation_id = EXCLUDED.installation_id,
		    full_name = EXCLUDED.full_name, private = EXCLUDED.private,
		    removed_at = NULL, updated_at = now()`
)

// UpsertRepositories records repositories of an installation (which must be
// recorded first), in one transaction.
func (s *Store) UpsertRepositories(ctx context.Context, installationID int64, repos []Repository) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		for _, r := range repos {
			if _, err := tx.Exec(ctx, retireSameName, r.ID, r.FullName); err != nil {
				return fmt.Errorf("repository %s: %w", r.FullName, err)
			}
			if _, err := tx.Exec(ctx, upsertRepository, r.ID, installationID, r.FullName, r.Private); err != nil {
				return fmt.Errorf("repository %s: %w", r.FullName, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("upsert repositories of installation %d: %w", installationID, err)
	}
	return nil
}

const removeRepositories = `UPDATE repositories SET removed_at = now(), updated_at = now()
	WHERE installation_id = $1 AND id = ANY($2) AND removed_at IS NULL`

// RemoveRepositories marks repositories as no longer accessible to the
// installation. Unknown ids are ignored.
func (s *Store) RemoveRepositories(ctx context.Context, installationID int64, ids []int64) error {
	if _, err := s.pool.Exec(ctx, removeRepositories, installationID, ids); err != nil {
		return fmt.Errorf("remove repositories of installation %d: %w", installationID, err)
	}
	return nil
}

const installationForRepo = `SELECT i.id FROM repositories r JOIN installations i ON i.id = r.installation_id
	WHERE lower(r.full_name) = lower($1) AND r.removed_at IS NULL
	  AND i.deleted_at IS NULL AND i.suspended_at IS NULL`

// InstallationForRepo returns the installation through which the App reaches
// the repository owner/name (any case). ErrNotFound when the repository is
// not installed, was removed, or its installation is deleted or suspended.
func (s *Store) InstallationForRepo(ctx context.Context, fullName string) (int64, error) {
	var id int64
	err := s.pool.QueryRow(ctx, installationForRepo, fullName).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("installation for %s: %w", fullName, ErrNotFound)
	}
	if err != nil {
		return 0, fmt.Errorf("installation for %s: %w", fullName, err)
	}
	return id, nil
}

const setPaused = `INSERT INTO pull_requests (repository, number, paused, changed_by)
	VALUES ($1, $2, $3, $4)
	ON CONFLICT (repository, number) DO UPDATE SET paused = EXCLUDED.paused,
	    changed_by = EXCLUDED.changed_by, updated_at = now()`

// SetPaused stops (paused) or restarts automatic reviews of a pull request;
// by names who asked.
func (s *Store) SetPaused(ctx context.Context, repo string, number int, paused bool, by string) error {
	if _, err := s.pool.Exec(ctx, setPaused, repo, number, paused, by); err != nil {
		return fmt.Errorf("set %s#%d paused=%t: %w", repo, number, paused, err)
	}
	return nil
}

// Paused reports whether automatic reviews of a pull request are paused.
func (s *Store) Paused(ctx context.Context, repo string, number int) (bool, error) {
	var paused bool
	err := s.pool.QueryRow(ctx, `SELECT paused FROM pull_requests WHERE repository = $1 AND number = $2`,
		repo, number).Scan(&paused)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read paused state of %s#%d: %w", repo, number, err)
	}
	return paused, nil
}

const installationUsage = `SELECT COALESCE(sum(input_tokens + output_tokens), 0), COALESCE(sum(total_cost), 0)
	FROM review_runs WHERE installation_id = $1 AND created_at >= $2`

// InstallationUsageSince sums the tokens and cost (US dollars) of the
// installation's runs created since the given time, for budgets.
func (s *Store) InstallationUsageSince(ctx context.Context, installationID int64, since time.Time) (tokens int, cost float64, err error) {
	if err := s.pool.QueryRow(ctx, installationUsage, installationID, since).Scan(&tokens, &cost); err != nil {
		return 0, 0, fmt.Errorf("usage of installation %d since %s: %w", installationID, since.Format(time.RFC3339), err)
	}
	return tokens, cost, nil
}
