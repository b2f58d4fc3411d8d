package catalog

import (
	"encoding/json"
	"net/http"
)

// SearchHandler serves GET /products?q=.
func SearchHandler(repo *Repo) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		products, err := repo.Search(r.Context(), r.URL.Query().Get("q"))
		if err != nil {
			http.Error(w, "search failed", http.StatusInternalServerError)
			return
		}
		_ = json.NewEncoder(w).Encode(products)
	}
}
