package hitl_test

import (
	"encoding/json"
	"testing"

	"github.com/hitl-sh/hitl"
)

func TestInferredType(t *testing.T) {
	schema := json.RawMessage(`{"type":"object"}`)
	opts := hitl.OptionList{{Key: "a", Label: "A"}}
	tests := []struct {
		name string
		req  hitl.CreateRequest
		want hitl.Type
	}{
		{"Nothing", hitl.CreateRequest{Question: "Why?"}, hitl.TypeFreeText},
		{"Options", hitl.CreateRequest{Options: opts}, hitl.TypeSingleChoice},
		{"Schema", hitl.CreateRequest{FormSchema: schema}, hitl.TypeForm},
		{"SchemaWinsOverOptions", hitl.CreateRequest{FormSchema: schema, Options: opts}, hitl.TypeForm},
		{"NamedTypeKept", hitl.CreateRequest{Type: hitl.TypeMultiChoice, Options: opts}, hitl.TypeMultiChoice},
		{"NamedFreeTextKept", hitl.CreateRequest{Type: hitl.TypeFreeText, FormSchema: schema}, hitl.TypeFreeText},
	}
	for _, tt := range tests {
		if got := tt.req.InferredType(); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}
