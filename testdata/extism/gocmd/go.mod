module github.com/toolhost/toolhost/testdata/extism/gocmd

go 1.26.8

require github.com/extism/go-pdk v1.1.3
