package tiny_test

import (
	"testing"

	"example.com/tiny"
)

func TestUse(t *testing.T) {
	if tiny.Use() != tiny.Add(1, 2) {
		t.Fatal("Use")
	}
}
