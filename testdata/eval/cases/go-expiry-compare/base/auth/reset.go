package auth

import (
	"errors"
	"time"
)

// ErrBadToken is a reset token that is unknown or used.
var ErrBadToken = errors.New("invalid reset token")

// ResetToken is a password-reset token.
type ResetToken struct {
	UserID    int64
	Used      bool
	ExpiresAt time.Time
}

// Check says whether t may reset a password.
func Check(t *ResetToken) error {
	if t == nil || t.Used {
		return ErrBadToken
	}
	return nil
}
