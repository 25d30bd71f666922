package ask

import (
	"context"
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/hitl-sh/hitl"
)

// Form asks the person to fill in a form shaped like T, a struct, and
// returns what they entered.
//
// The form is T's JSON Schema, derived by github.com/google/jsonschema-go:
// fields named by their json tags, required unless tagged omitempty or
// omitzero, described by their jsonschema tags, no other fields allowed.
// The server validates the answer against it, so the value decodes into T.
func Form[T any](ctx context.Context, svc hitl.Service, question string, opts *Options) (T, error) {
	var v T
	schema, err := Schema[T]()
	if err != nil {
		return v, err
	}
	req, err := opts.request(hitl.TypeForm, question)
	if err != nil {
		return v, err
	}
	req.FormSchema = schema
	_, err = askValue(ctx, svc, req, &v)
	return v, err
}

// Schema returns the JSON Schema that Form sends for T.
func Schema[T any]() (json.RawMessage, error) {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		var v T
		return nil, hitl.Errorf(hitl.EINVALID, "form schema for %T: %v", v, err)
	}
	b, err := json.Marshal(s)
	if err != nil {
		var v T
		return nil, hitl.Errorf(hitl.EINVALID, "form schema for %T: %v", v, err)
	}
	return b, nil
}
