package c

var DoubleForTest = double
