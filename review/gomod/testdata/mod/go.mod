module example.com/mod

go 1.22

require github.com/third/party v1.0.0
