package hitl

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/hitl-sh/hitl/internal/jsonschema"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// schemaCache holds compiled form schemas by content hash, so validating an
// answer does not recompile. It is cleared when it grows past maxCachedSchemas.
var schemaCache struct {
	sync.Mutex
	m map[[32]byte]*jsonschema.Schema
}

const maxCachedSchemas = 1024

var printer = message.NewPrinter(language.English)

// CompileSchema compiles a form's JSON Schema (draft 2020-12 unless
// "$schema" says otherwise). External references are never loaded, formats
// are asserted, and the schema must describe an object. It must keep
// within the bounds in formlimits.go, which are checked first, before
// any compiling: a schema stored before they existed is refused as
// quickly when an answer compiles it.
func CompileSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	if len(raw) > MaxFormSchemaLen {
		return nil, Errorf(EINVALID, "form_schema is limited to %d bytes; got %d", MaxFormSchemaLen, len(raw))
	}
	key := sha256.Sum256(raw)
	schemaCache.Lock()
	s, ok := schemaCache.m[key]
	schemaCache.Unlock()
	if ok {
		return s, nil
	}
	if err := checkSchemaShape(raw); err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, Errorf(EINVALID, "form_schema is not valid JSON")
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, Errorf(EINVALID, "form_schema must be a JSON Schema object")
	}
	if t, ok := obj["type"]; ok && t != "object" {
		return nil, Errorf(EINVALID, `form_schema must describe an object ("type": "object")`)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(jsonschema.SchemeURLLoader{}) // no file or network access
	c.AssertFormat()
	// A hierarchical base, so relative references resolve to URLs that the
	// loader refuses instead of silently to the schema itself (as they do
	// against a URN). The .invalid domain is reserved and never resolves.
	const loc = "https://hitl.invalid/form_schema.json"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, Errorf(EINVALID, "form_schema: %s", firstLine(err.Error()))
	}
	s, err = c.Compile(loc)
	if err != nil {
		return nil, Errorf(EINVALID, "form_schema is not a valid JSON Schema: %s", firstLine(err.Error()))
	}
	if err := checkFanOut(s); err != nil {
		return nil, err
	}
	schemaCache.Lock()
	if schemaCache.m == nil || len(schemaCache.m) >= maxCachedSchemas {
		schemaCache.m = make(map[[32]byte]*jsonschema.Schema)
	}
	schemaCache.m[key] = s
	schemaCache.Unlock()
	return s, nil
}

// validateForm checks a form's value against the compiled schema and
// returns it in canonical form (compact, keys sorted, valid UTF-8), or a
// readable reason naming each failing field.
func validateForm(schema json.RawMessage, value json.RawMessage) (json.RawMessage, error) {
	return validateObject(schema, value, "form value", MaxFormValueLen)
}

// validateObject is validateForm for any object of at most max bytes,
// called what in errors (an action's edited args too).
func validateObject(schema json.RawMessage, value json.RawMessage, what string, max int) (json.RawMessage, error) {
	s, err := CompileSchema(schema)
	if err != nil {
		return nil, err
	}
	if len(value) > max {
		return nil, Errorf(EVALUE, "%s is limited to %d bytes; got %d", what, max, len(value))
	}
	if !json.Valid(value) {
		return nil, Errorf(EVALUE, "%s is not valid JSON", what)
	}
	// A repeated field would be validated by its last value while a reader
	// that keeps the first would see another; refuse rather than guess.
	if k := duplicateKey(value); k != "" {
		return nil, Errorf(EVALUE, "%s has field %q twice", what, k)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(value))
	if err != nil {
		return nil, Errorf(EVALUE, "%s is not valid JSON", what)
	}
	if _, ok := doc.(map[string]any); !ok {
		return nil, Errorf(EVALUE, "%s must be an object", what)
	}
	if err := checkValueNumbers(doc, nil); err != nil {
		return nil, err
	}
	err = s.Validate(doc)
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		return nil, Errorf(EVALUE, "%s", describe(ve))
	} else if err != nil {
		return nil, Errorf(EVALUE, "%s is invalid", what)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, Errorf(EVALUE, "%s is invalid", what)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// describe flattens a validation error into "at /field: reason" lines.
func describe(ve *jsonschema.ValidationError) string {
	var leaves []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			loc := "/" + strings.Join(e.InstanceLocation, "/")
			leaves = append(leaves, fmt.Sprintf("at %s: %s", loc, e.ErrorKind.LocalizedString(printer)))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	sort.Strings(leaves)
	if len(leaves) > 10 {
		leaves = append(leaves[:10], fmt.Sprintf("and %d more", len(leaves)-10))
	}
	return strings.Join(leaves, "; ")
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
