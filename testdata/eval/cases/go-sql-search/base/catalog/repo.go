package catalog

import (
	"context"
	"database/sql"
)

// Product is one catalog item.
type Product struct {
	ID    int64
	Name  string
	Price int64
}

// Repo reads the catalog.
type Repo struct{ DB *sql.DB }

// ByID returns one product.
func (r *Repo) ByID(ctx context.Context, id int64) (Product, error) {
	var p Product
	err := r.DB.QueryRowContext(ctx, `SELECT id, name, price FROM products WHERE id = $1`, id).Scan(&p.ID, &p.Name, &p.Price)
	return p, err
}
