package hitltest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/hitl-sh/hitl/openapi"
	"github.com/pb33f/libopenapi"
	"github.com/pb33f/libopenapi-validator/config"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	"github.com/pb33f/libopenapi/datamodel/high/base"
)

// streamMessages are the schemas of the live streams' messages, by type,
// from the OpenAPI document's StreamMessage (its discriminator's mapping).
var streamMessages struct {
	once    sync.Once
	schemas map[string]*base.Schema
	check   schema_validation.SchemaValidator
	err     error
}

// loadStreamMessages reads the message schemas from the document, once.
func loadStreamMessages() error {
	m := &streamMessages
	m.once.Do(func() {
		doc, err := libopenapi.NewDocument(openapi.JSON)
		if err != nil {
			m.err = fmt.Errorf("parse the OpenAPI document: %w", err)
			return
		}
		model, err := doc.BuildV3Model()
		if err != nil {
			m.err = fmt.Errorf("build the OpenAPI model: %w", err)
			return
		}
		schemas := model.Model.Components.Schemas
		union, ok := schemas.Get("StreamMessage")
		if !ok || union.Schema() == nil || union.Schema().Discriminator == nil {
			m.err = errors.New("the OpenAPI document has no StreamMessage with a discriminator")
			return
		}
		m.schemas = make(map[string]*base.Schema)
		for typ, ref := range union.Schema().Discriminator.Mapping.FromOldest() {
			name := strings.TrimPrefix(ref, "#/components/schemas/")
			proxy, ok := schemas.Get(name)
			if !ok || proxy.Schema() == nil {
				m.err = fmt.Errorf("StreamMessage maps %s to %s, which is not a schema", typ, ref)
				return
			}
			m.schemas[typ] = proxy.Schema()
		}
		m.check = schema_validation.NewSchemaValidator(config.WithFormatAssertions())
	})
	return m.err
}

// CheckStreamMessage checks one message of the live streams (a WebSocket
// text frame, or the data of a Server-Sent Event) against the OpenAPI
// document: the schema its type names in StreamMessage, and no field that
// schema does not name. It returns nil when the message fits.
func CheckStreamMessage(data []byte) error {
	if err := loadStreamMessages(); err != nil {
		return err
	}
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return fmt.Errorf("stream message %s: %w", data, err)
	}
	schema, ok := streamMessages.schemas[head.Type]
	if !ok {
		return fmt.Errorf("stream message of type %q: the OpenAPI document's StreamMessage has no such type", head.Type)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return fmt.Errorf("stream message %s: %w", data, err)
	}
	for name := range fields {
		if _, ok := schema.Properties.Get(name); !ok {
			return fmt.Errorf("stream message %s: field %q is not in the OpenAPI document's %s", data, name, head.Type)
		}
	}
	if ok, errs := streamMessages.check.ValidateSchemaBytes(schema, data); !ok {
		msgs := make([]string, 0, len(errs))
		for _, e := range errs {
			msgs = append(msgs, describe(e))
		}
		return fmt.Errorf("stream message %s does not fit the OpenAPI document: %s", data, strings.Join(msgs, "; "))
	}
	return nil
}
