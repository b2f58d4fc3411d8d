package tiny

import "testing"

func TestAdd(t *testing.T) {
	if Add(1, 2) == 0 {
		t.Fatal("zero")
	}
}
