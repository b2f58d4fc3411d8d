package archive

// Config says where receipts go.
type Config struct {
	Bucket    string
	Region    string
	AccessKey string
	SecretKey string
}

// Default is the production configuration.
var Default = Config{
	Bucket:    "shop-receipts",
	Region:    "eu-west-1",
	AccessKey: "AKIAQ7Z3RJ5XK2WMBT4P",
	SecretKey: "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",
}
