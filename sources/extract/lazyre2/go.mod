module github.com/wasilibs/go-re2

go 1.26
