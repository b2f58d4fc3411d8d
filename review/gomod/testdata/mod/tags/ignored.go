//go:build ignore

package main

func main() {}
