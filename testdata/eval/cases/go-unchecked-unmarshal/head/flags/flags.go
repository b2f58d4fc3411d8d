package flags

import (
	"encoding/json"
	"fmt"
	"os"
)

// Flags are the feature switches.
type Flags struct {
	NewCheckout bool `json:"new_checkout"`
	DarkMode    bool `json:"dark_mode"`
}

// Load reads the flags from the JSON file at path.
func Load(path string) (Flags, error) {
	var f Flags
	data, err := os.ReadFile(path)
	if err != nil {
		return f, fmt.Errorf("read flags: %w", err)
	}
	json.Unmarshal(data, &f)
	return f, nil
}
