package tags

const v = 1
