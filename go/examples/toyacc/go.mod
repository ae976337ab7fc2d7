module example.com/toyacc

go 1.24

require github.com/toolcert/toolcert/go v0.0.0

replace github.com/toolcert/toolcert/go => ../..
