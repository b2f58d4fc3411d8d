package export

import (
	"encoding/csv"
	"errors"
	"fmt"
	"os"
)

// Export writes rows to path as CSV. An error closing the file (a full
// disk is often only reported then) is returned too.
func Export(path string, rows [][]string) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	defer func() {
		if cerr := f.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("export: close: %w", cerr))
		}
	}()
	w := csv.NewWriter(f)
	if err := w.WriteAll(rows); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return nil
}
