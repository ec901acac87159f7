module suite

go 1.26
