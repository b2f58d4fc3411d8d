package export

import (
	"encoding/csv"
	"fmt"
	"os"
)

// Export writes rows to path as CSV.
func Export(path string, rows [][]string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	defer f.Close()
	w := csv.NewWriter(f)
	if err := w.WriteAll(rows); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return nil
}
