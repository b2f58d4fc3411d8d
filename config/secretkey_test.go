package config_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mergeguard/mergeguard/config"
)

func TestParseSecretKey(t *testing.T) {
	want := bytes.Repeat([]byte{0xab}, 32)
	tests := []struct {
		name, in string
		ok       bool
	}{
		{"hex", strings.Repeat("ab", 32), true},
		{"base64", "q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s=", true},
		{"base64 unpadded with a newline", "q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s\n", true},
		{"too short", "q6urq6ur", false},
		{"31 bytes of hex", strings.Repeat("ab", 31), false},
		{"not an encoding", "correct horse battery staple, twelve words", false},
		{"empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := config.ParseSecretKey(tt.in)
			if (err == nil) != tt.ok {
				t.Fatalf("ParseSecretKey error = %v, want ok %v", err, tt.ok)
			}
			if tt.ok && !bytes.Equal(got, want) {
				t.Errorf("ParseSecretKey = %x, want %x", got, want)
			}
			if err != nil && tt.in != "" && strings.Contains(err.Error(), strings.TrimSpace(tt.in)) {
				t.Errorf("the error quotes the key: %v", err)
			}
		})
	}
}

func TestValidateSecretKey(t *testing.T) {
	cfg := config.Default()
	cfg.Database.SecretKey = "too-short"
	err := cfg.Validate()
	if err == nil || !strings.Contains(err.Error(), "database.secret_key: must be 32 random bytes") {
		t.Fatalf("Validate = %v, want the database.secret_key problem", err)
	}
	if strings.Contains(err.Error(), "too-short") {
		t.Errorf("the problem quotes the key: %v", err)
	}
}
