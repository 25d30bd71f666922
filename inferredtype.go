package hitl

// InferredType returns the type of a question asked without one, as the
// hitl CLI and the MCP tools read it: a form schema means form, options
// mean single_choice, and anything else is free_text (what the HTTP API
// takes an empty type for). A request that names its type keeps it.
func (r CreateRequest) InferredType() Type {
	switch {
	case r.Type != "":
		return r.Type
	case r.FormSchema != nil:
		return TypeForm
	case len(r.Options) > 0:
		return TypeSingleChoice
	}
	return TypeFreeText
}
