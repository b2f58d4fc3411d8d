// Package tags has files this machine does not build.
package tags

// V is declared once on linux/amd64.
var V = v
