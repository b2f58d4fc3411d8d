package main

import (
	"log"

	"example.com/shop/flags"
)

func main() {
	f := flags.Load()
	log.Printf("flags: %+v", f)
}
