module github.com/toolhost/toolhost/testdata/extism/gopdk

go 1.26.8

require github.com/extism/go-pdk v1.1.3
