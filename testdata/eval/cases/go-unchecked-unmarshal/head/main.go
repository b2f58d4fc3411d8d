package main

import (
	"log"

	"example.com/shop/flags"
)

func main() {
	f, err := flags.Load("flags.json")
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("flags: %+v", f)
}
