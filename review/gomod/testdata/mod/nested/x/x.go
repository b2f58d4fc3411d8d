package x

// Name is in another module.
const Name = "x"
