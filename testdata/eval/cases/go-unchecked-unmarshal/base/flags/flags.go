package flags

import "os"

// Flags are the feature switches.
type Flags struct {
	NewCheckout bool `json:"new_checkout"`
	DarkMode    bool `json:"dark_mode"`
}

// Load reads the flags from the environment.
func Load() Flags {
	return Flags{
		NewCheckout: os.Getenv("FLAG_NEW_CHECKOUT") == "1",
		DarkMode:    os.Getenv("FLAG_DARK_MODE") == "1",
	}
}
