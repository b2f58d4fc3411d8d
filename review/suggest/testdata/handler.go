package server

import (
	"fmt"
	"net/http"
)

// Handler greets.
func Handler(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("name")
	if name == "" {
		name = "world"
	}
	fmt.Fprintf(w, "hello, %s", name)
}
