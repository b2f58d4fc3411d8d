package store

import (
	"context"
	"database/sql"
	"errors"
)

// User is an account owner.
type User struct {
	ID    int64
	Email string
	Name  string
}

// Users reads users.
type Users struct{ DB *sql.DB }

// ByID returns the user with id, or nil when there is none.
func (u *Users) ByID(ctx context.Context, id int64) (*User, error) {
	var x User
	err := u.DB.QueryRowContext(ctx, `SELECT id, email, name FROM users WHERE id = $1`, id).
		Scan(&x.ID, &x.Email, &x.Name)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &x, nil
}
