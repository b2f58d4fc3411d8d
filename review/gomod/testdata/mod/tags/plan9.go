//go:build plan9 || (windows && !linux)

package tags

const v = 4
