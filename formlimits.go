package hitl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/hitl-sh/hitl/internal/jsonschema"
)

// Bounds of a form. Its schema is compiled when the form is asked, and
// again on the first answer after a restart, in time that grows much
// faster than the schema's size with nesting (a thousand nested allOf
// took seconds, a few thousand minutes); every answer is checked
// against it, in time proportional to the answer's size times the number
// of subschemas that apply to each of its values, which $ref can double
// at every step. These bounds are checked before compiling, quickly.
const (
	// MaxFormSchemaLen bounds form_schema, encoded: a form with a couple
	// of hundred described fields fits.
	MaxFormSchemaLen = 64 << 10
	// MaxSchemaDepth bounds how deeply form_schema's JSON nests (every
	// object and array is a level; a nested object field takes two).
	MaxSchemaDepth = 32
	// MaxSchemaObjects bounds the objects in form_schema's JSON: each
	// subschema is one.
	MaxSchemaObjects = 1000
	// MaxSchemaFanOut bounds how many subschemas may apply to any one
	// value of an answer, through $ref, allOf, anyOf, oneOf, not,
	// if/then/else and dependentSchemas.
	MaxSchemaFanOut = 16
	// MaxFormValueLen bounds a form's answer, encoded, like a free-text
	// answer (MaxFreeTextLen).
	MaxFormValueLen = 64 << 10
)

// checkSchemaShape checks form_schema's JSON against the bounds that make
// compiling it cheap: size, depth and number of objects, and numbers a
// validator can hold. raw is at most MaxFormSchemaLen bytes.
func checkSchemaShape(raw json.RawMessage) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	depth, objects := 0, 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return nil
		} else if err != nil {
			return Errorf(EINVALID, "form_schema is not valid JSON")
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			if depth++; depth > MaxSchemaDepth {
				return Errorf(EINVALID, "form_schema is nested more than %d levels deep", MaxSchemaDepth)
			}
			if tok == json.Delim('{') {
				if objects++; objects > MaxSchemaObjects {
					return Errorf(EINVALID, "form_schema has more than %d objects (subschemas)", MaxSchemaObjects)
				}
			}
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if n, ok := tok.(json.Number); ok && !finite(n) {
			return Errorf(EINVALID, "form_schema has a number out of range: %.40s", n)
		}
	}
}

// finite reports whether n is within a float64's range (not 1e400), with
// a written exponent of at most maxExponent either way: the validator
// computes with exact rationals, and panicked on 1e10000000 (and takes
// long over exponents far beyond a float64's).
func finite(n json.Number) bool {
	s := string(n)
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		exp, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
		if err != nil || exp > maxExponent || exp < -maxExponent {
			return false
		}
	}
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// maxExponent bounds the exponent written in a number: a little more than
// a float64 needs (its smallest is about 5e-324).
const maxExponent = 400

// checkValueNumbers refuses numbers out of a float64's range in a form's
// answer (see finite), naming where.
func checkValueNumbers(v any, at []string) error {
	switch t := v.(type) {
	case json.Number:
		if !finite(t) {
			return Errorf(EVALUE, "at /%s: number out of range", strings.Join(at, "/"))
		}
	case []any:
		for i, e := range t {
			if err := checkValueNumbers(e, append(at, strconv.Itoa(i))); err != nil {
				return err
			}
		}
	case map[string]any:
		for k, e := range t {
			if err := checkValueNumbers(e, append(at, k)); err != nil {
				return err
			}
		}
	}
	return nil
}

// fanOutWork bounds the work of checkFanOut, in subschemas visited.
const fanOutWork = 20 * MaxSchemaObjects

// checkFanOut checks, on the compiled schema, that at most
// MaxSchemaFanOut subschemas can apply to any one value of an answer,
// $ref followed. It walks the schema level by level, as a validator
// walks an answer: the subschemas that apply to a value (following the
// keywords that apply in place), then, per property name or array item,
// those that apply to its children. It assumes the worst of what it
// cannot know (a property matching a pattern, say, gets the pattern's
// subschemas too).
func checkFanOut(root *jsonschema.Schema) error {
	c := fanOut{seen: make(map[string]bool)}
	return c.level(map[*jsonschema.Schema]int{root: 1}, "")
}

// fanOut is the state of checkFanOut.
type fanOut struct {
	work int
	seen map[string]bool // levels already checked, by signature
}

// level checks the values that the subschemas at apply to, each the
// given number of times, and their children. at is where, for messages.
func (c *fanOut) level(at map[*jsonschema.Schema]int, where string) error {
	sig := signature(at)
	if c.seen[sig] {
		return nil // a recursive schema: this level is checked already
	}
	c.seen[sig] = true
	applied := make(map[*jsonschema.Schema]int)
	total := 0
	var apply func(s *jsonschema.Schema, n int) error
	apply = func(s *jsonschema.Schema, n int) error {
		if s == nil {
			return nil
		}
		if s.DynamicRef != nil || s.RecursiveRef != nil {
			return Errorf(EINVALID, "form_schema may not use $dynamicRef or $recursiveRef")
		}
		if c.work++; c.work > fanOutWork {
			return Errorf(EINVALID, "form_schema is too intricate to check (its $ref are followed more than %d times); simplify it", fanOutWork)
		}
		if total += n; total > MaxSchemaFanOut {
			return Errorf(EINVALID, "form_schema applies more than %d subschemas to one value (at %s/): $ref, allOf, anyOf, oneOf and if/then/else add up", MaxSchemaFanOut, where)
		}
		applied[s] += n
		for _, sub := range inPlace(s) {
			if err := apply(sub, n); err != nil {
				return err
			}
		}
		return nil
	}
	for s, n := range at {
		if err := apply(s, n); err != nil {
			return err
		}
	}
	children := childLevels(applied)
	keys := make([]string, 0, len(children))
	for k := range children {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		name := strings.TrimPrefix(strings.TrimPrefix(k, "p:"), "i:")
		if err := c.level(children[k], where+"/"+name); err != nil {
			return err
		}
	}
	return nil
}

// inPlace returns the subschemas of s that apply to the same value as s.
func inPlace(s *jsonschema.Schema) []*jsonschema.Schema {
	out := []*jsonschema.Schema{s.Ref, s.Not, s.If, s.Then, s.Else}
	out = append(out, s.AllOf...)
	out = append(out, s.AnyOf...)
	out = append(out, s.OneOf...)
	for _, k := range sortedKeys(s.DependentSchemas) {
		out = append(out, s.DependentSchemas[k])
	}
	for _, k := range sortedKeys(s.Dependencies) {
		if sub, ok := s.Dependencies[k].(*jsonschema.Schema); ok {
			out = append(out, sub)
		}
	}
	return out
}

// childLevels groups the subschemas that the applied ones give the
// values inside a value: by property name ("name"), by array item
// ("0", "1", …), with those for any property ("*") or any item ("[]")
// added to each, and for property names ("names") and decoded content
// ("content").
func childLevels(applied map[*jsonschema.Schema]int) map[string]map[*jsonschema.Schema]int {
	out := make(map[string]map[*jsonschema.Schema]int)
	add := func(key string, s *jsonschema.Schema, n int) {
		if s == nil {
			return
		}
		if out[key] == nil {
			out[key] = make(map[*jsonschema.Schema]int)
		}
		out[key][s] += n
	}
	for s, n := range applied {
		for name, sub := range s.Properties {
			add("p:"+name, sub, n)
		}
		for _, sub := range s.PatternProperties {
			add("*", sub, n)
		}
		if sub, ok := s.AdditionalProperties.(*jsonschema.Schema); ok {
			add("*", sub, n)
		}
		add("*", s.UnevaluatedProperties, n)
		add("names", s.PropertyNames, n)
		switch items := s.Items.(type) {
		case *jsonschema.Schema:
			add("[]", items, n)
		case []*jsonschema.Schema:
			for i, sub := range items {
				add("i:"+strconv.Itoa(i), sub, n)
			}
		}
		if sub, ok := s.AdditionalItems.(*jsonschema.Schema); ok {
			add("[]", sub, n)
		}
		for i, sub := range s.PrefixItems {
			add("i:"+strconv.Itoa(i), sub, n)
		}
		add("[]", s.Items2020, n)
		add("[]", s.Contains, n)
		add("[]", s.UnevaluatedItems, n)
		add("content", s.ContentSchema, n)
	}
	for key, m := range out {
		wild := ""
		switch {
		case strings.HasPrefix(key, "p:"):
			wild = "*"
		case strings.HasPrefix(key, "i:"):
			wild = "[]"
		default:
			continue
		}
		for s, n := range out[wild] {
			m[s] += n
		}
	}
	return out
}

// signature identifies a level: its subschemas and how often each
// applies.
func signature(at map[*jsonschema.Schema]int) string {
	parts := make([]string, 0, len(at))
	for s, n := range at {
		parts = append(parts, fmt.Sprintf("%p*%d", s, n))
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

// sortedKeys returns m's keys in order, so the walk is deterministic.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
