package auth

import (
	"errors"
	"time"
)

// ErrBadToken is a reset token that is unknown or used.
var ErrBadToken = errors.New("invalid reset token")

// ErrExpired is a reset token past its expiry.
var ErrExpired = errors.New("reset token expired")

// ResetToken is a password-reset token.
type ResetToken struct {
	UserID    int64
	Used      bool
	ExpiresAt time.Time
}

// Check says whether t may reset a password at now.
func Check(t *ResetToken, now time.Time) error {
	if t == nil || t.Used {
		return ErrBadToken
	}
	if now.Before(t.ExpiresAt) {
		return ErrExpired
	}
	return nil
}
