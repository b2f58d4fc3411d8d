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

// Header returns the first lines of an invoice, with the owner's contact.
func (r *Renderer) Header(ctx context.Context, inv Invoice) (string, error) {
	owner, err := r.Users.ByID(ctx, inv.OwnerID)
	if err != nil {
		return "", fmt.Errorf("invoice %s: owner: %w", inv.Number, err)
	}
	return fmt.Sprintf("Invoice %s\nBill to: %s\nTotal: %d.%02d EUR\n",
		inv.Number, owner.Email, inv.Total/100, inv.Total%100), nil
}
