package tags

// #include <stdio.h>
import "C"

const v = 3
