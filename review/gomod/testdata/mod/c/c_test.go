package c_test

import (
	"testing"

	"example.com/mod/c"
)

func TestDouble(t *testing.T) {
	if c.DoubleForTest(2) != c.Double(2) {
		t.Fatal("differ")
	}
}
