module example.com/tools
