package billing

import (
	"context"
	"fmt"

	"example.com/shop/store"
)

// Invoice is what a customer is billed.
type Invoice struct {
	Number  string
	OwnerID int64
	Total   int64
}

// Renderer renders invoices.
type Renderer struct {
	Users *store.Users
}

// Header returns the first lines of an invoice.
func (r *Renderer) Header(ctx context.Context, inv Invoice) (string, error) {
	return fmt.Sprintf("Invoice %s\nTotal: %d.%02d EUR\n", inv.Number, inv.Total/100, inv.Total%100), nil
}
