// Package docs carries the service's documents that the binary serves:
// the OpenAPI document of the HTTP contract. It sits beside the document
// because go:embed cannot reach a file outside its package's directory.
package docs

import _ "embed"

// OpenAPI is docs/openapi.yaml, the HTTP contract in OpenAPI 3.1 form.
//
//go:embed openapi.yaml
var OpenAPI []byte
