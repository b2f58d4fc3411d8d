package setup

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/mergeguard/mergeguard/github"
	"github.com/mergeguard/mergeguard/server/store"
)

// codeAlphabet is the setup code's: no 0/O, 1/I/L to misread.
const codeAlphabet = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"

// newCode returns a fresh setup code: 16 characters of codeAlphabet (about
// 79 bits) in groups of four, "ABCD-EFGH-JKMN-PQRS".
func newCode() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("setup code: %w", err)
	}
	var sb strings.Builder
	for i, c := range b {
		if i > 0 && i%4 == 0 {
			sb.WriteByte('-')
		}
		sb.WriteByte(codeAlphabet[int(c)%len(codeAlphabet)])
	}
	return sb.String(), nil
}

// normaliseCode is a code as typed, without spaces and dashes, in capitals.
func normaliseCode(s string) string {
	return strings.ToUpper(strings.NewReplacer("-", "", " ", "", "\t", "").Replace(strings.TrimSpace(s)))
}

// Code returns the setup code, stored (on the first call of any replica)
// in the database so that every replica asks for the same one.
func (s *Setup) Code(ctx context.Context) (string, error) {
	fresh, err := newCode()
	if err != nil {
		return "", err
	}
	return s.d.Store.AccessSecret(ctx, store.SecretSetupCode, fresh)
}

// needsCode reports whether creating an App asks for the setup code:
// while no App is stored (or the stored one cannot be read).
func (s *Setup) needsCode(ctx context.Context) bool {
	_, ok, err := s.d.Store.AppCredentials(ctx)
	return !ok || err != nil
}

// errWrongCode says the form's setup code is missing or wrong.
var errWrongCode = errors.New("the setup code is missing or wrong: copy it from the server log (the line \"setup code\")")

// checkCode checks the form's setup code when one is needed.
func (s *Setup) checkCode(ctx context.Context, typed string) error {
	if !s.needsCode(ctx) {
		return nil
	}
	code, err := s.Code(ctx)
	if err != nil {
		return err
	}
	if subtle.ConstantTimeCompare([]byte(normaliseCode(typed)), []byte(normaliseCode(code))) != 1 {
		return errWrongCode
	}
	return nil
}

// AnnounceCode logs the setup code when /setup will ask for it (no App
// stored, the flow on), for the operator to copy; serve calls it at start.
func (s *Setup) AnnounceCode(ctx context.Context) error {
	if title, _ := s.off(); title != "" || !s.needsCode(ctx) {
		return nil
	}
	code, err := s.Code(ctx)
	if err != nil {
		return err
	}
	s.d.Logger.Warn().Str("setup_code", code).Msg("setup code: /setup asks for it to create the GitHub App (valid until an App is stored)")
	return nil
}

// checkWebURL returns the GitHub web address the form may send the
// manifest to, canonical: https://github.com or the configured GitHub
// (github.web_url, an Enterprise host). Another address would receive the
// manifest and hand back an App of someone else's choosing. "" (a URL
// the form check refused already) passes.
func (s *Setup) checkWebURL(webURL string) (string, error) {
	if webURL == "" {
		return "", nil
	}
	for _, allowed := range []string{github.DefaultWebURL, s.d.WebURL} {
		if sameBase(webURL, allowed) {
			return strings.TrimSuffix(allowed, "/"), nil
		}
	}
	allowed := "https://github.com"
	if !sameBase(s.d.WebURL, github.DefaultWebURL) {
		allowed += " or " + strings.TrimSuffix(s.d.WebURL, "/") + " (github.web_url)"
	}
	return "", fmt.Errorf("GitHub's web URL must be %s: MergeGuard sends the App's manifest nowhere else", allowed)
}

// sameBase reports whether two base URLs have the same scheme, host
// (any case) and path (without trailing slash).
func sameBase(a, b string) bool {
	ua, errA := url.Parse(a)
	ub, errB := url.Parse(b)
	if errA != nil || errB != nil {
		return false
	}
	return strings.EqualFold(ua.Scheme, ub.Scheme) && strings.EqualFold(ua.Host, ub.Host) &&
		strings.TrimSuffix(ua.Path, "/") == strings.TrimSuffix(ub.Path, "/")
}
