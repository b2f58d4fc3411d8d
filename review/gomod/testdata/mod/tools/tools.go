// Package tools is a module of its own that nothing imports.
package tools
