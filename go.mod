module toolhost

go 1.26.8

require (
	github.com/go-json-experiment/json v1.27.2
	github.com/gosimple/slug v1.15.0
	github.com/gosimple/unidecode v1.0.1
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	github.com/tdewolff/minify/v2 v2.24.25
	github.com/tdewolff/parse/v2 v2.8.20
	github.com/tetratelabs/wazero v1.12.0
	go.uber.org/goleak v1.3.0
)

require (
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.14.0 // indirect
)
