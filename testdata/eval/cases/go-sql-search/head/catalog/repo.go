package catalog

import (
	"context"
	"database/sql"
	"fmt"
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

// Search returns the products whose name contains q.
func (r *Repo) Search(ctx context.Context, q string) ([]Product, error) {
	query := fmt.Sprintf("SELECT id, name, price FROM products WHERE name ILIKE '%%%s%%' ORDER BY name LIMIT 50", q)
	rows, err := r.DB.QueryContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	defer rows.Close()
	var out []Product
	for rows.Next() {
		var p Product
		if err := rows.Scan(&p.ID, &p.Name, &p.Price); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}
