package analyzer_test

import (
	"testing"

	"github.com/mergeguard/mergeguard/review/analyzer"
)

func TestInTestFixture(t *testing.T) {
	tests := []struct {
		path string
		want bool
	}{
		{"testdata/keys.txt", true},
		{"pkg/scan/testdata/rules/aws.toml", true},
		{"test/fixtures/id_rsa", true},
		{"spec/fixtures/config.yml", true},
		{"src/__fixtures__/token.json", true},
		{"src/__tests__/api.js", true},
		{"detect/aws_test.go", true},
		{"tests/test_rules.py", true},
		{"tests/rules_test.py", true},
		{"conftest.py", true},
		{"web/app.spec.ts", true},
		{"web/app.test.tsx", true},
		{"lib/token_spec.rb", true},
		{"src/main/java/x/TokenTest.java", true},
		{"config/aws.go", false},
		{"cmd/latest.go", false},
		{"contest.py", false},
		{"settings.py", false},
		{"testing/keys.go", false},
		{"attestation/data.json", false},
		{"deploy/.env", false},
	}
	for _, tt := range tests {
		if got := analyzer.InTestFixture(tt.path); got != tt.want {
			t.Errorf("InTestFixture(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
}
