package archive

// Config says where receipts go.
type Config struct {
	Bucket string
	Region string
}

// Default is the production configuration.
var Default = Config{Bucket: "shop-receipts", Region: "eu-west-1"}
