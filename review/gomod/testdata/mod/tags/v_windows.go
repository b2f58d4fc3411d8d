package tags

const v = "windows"
