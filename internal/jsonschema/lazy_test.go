package jsonschema

import (
	"strings"
	"sync"
	"testing"
)

// compiledAtStart is whether the meta-schemas were compiled while the
// package initialised (the init functions of draft.go run before this
// file's: files initialise in the order of their names).
var compiledAtStart bool

func init() { compiledAtStart = Draft2020.sch != nil }

// TestMetaSchemasOnFirstCompile (hitl's change, see README.md): no
// meta-schema is compiled while the package initialises, and schemas are
// still checked against their draft's meta-schema when several compiles
// race to be first.
func TestMetaSchemasOnFirstCompile(t *testing.T) {
	if compiledAtStart {
		t.Fatal("the meta-schemas were compiled while the package initialised")
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			schema := `{"type":"object","properties":{"n":{"type":"int"}}}` // no such type
			if i%2 == 0 {
				schema = `{"type":"object","properties":{"n":{"type":"integer"}}}`
			}
			doc, err := UnmarshalJSON(strings.NewReader(schema))
			if err != nil {
				t.Error(err)
				return
			}
			c := NewCompiler()
			const loc = "https://hitl.invalid/schema.json"
			if err := c.AddResource(loc, doc); err != nil {
				t.Error(err)
				return
			}
			_, err = c.Compile(loc)
			if valid := i%2 == 0; valid != (err == nil) {
				t.Errorf("%s: compile error %v", schema, err)
			}
		})
	}
	wg.Wait()
	if Draft2020.sch == nil || Draft4.sch == nil {
		t.Error("a Compile left the meta-schemas uncompiled")
	}
}
