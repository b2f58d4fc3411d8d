// Package sub has a file that does not parse.
package sub

// Ok parses.
const Ok = 1
