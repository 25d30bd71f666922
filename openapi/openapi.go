// Package openapi holds the OpenAPI 3.1 document of hitl's HTTP API,
// openapi.json beside this file. The document is written by hand and is the
// source of truth: the server serves it at GET /api/v1/openapi.json, and the
// tests check that it names every route and that every response they get
// fits it.
package openapi

import _ "embed"

// JSON is the OpenAPI 3.1 document of hitl's HTTP API. Do not modify it.
//
//go:embed openapi.json
var JSON []byte
