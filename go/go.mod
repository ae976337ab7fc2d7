module github.com/toolcert/toolcert/go

go 1.24
