package hitl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strings"
)

// PatchOp is one operation of an RFC 6902 JSON Patch.
type PatchOp struct {
	Op    string          `json:"op"` // add, remove or replace
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value,omitempty"`
}

// JSONPatch returns the RFC 6902 JSON Patch that turns the JSON value from
// into to, or nil when they are equal. Objects are compared key by key,
// recursively, keys in sorted order; anything else that differs (arrays,
// strings, numbers, a change of type) is replaced whole. Numbers are equal
// when their values are (1 and 1.0), and keys are escaped as RFC 6901
// says ("~" as "~0", "/" as "~1"). Applied to from, the patch gives a value
// equal to to.
func JSONPatch(from, to json.RawMessage) (json.RawMessage, error) {
	a, err := decodeJSON(from)
	if err != nil {
		return nil, fmt.Errorf("json patch: from: %w", err)
	}
	b, err := decodeJSON(to)
	if err != nil {
		return nil, fmt.Errorf("json patch: to: %w", err)
	}
	var ops []PatchOp
	if err := diff(&ops, "", a, b); err != nil {
		return nil, err
	}
	if len(ops) == 0 {
		return nil, nil
	}
	return encodeJSON(ops)
}

// diff appends to ops what turns a into b at path.
func diff(ops *[]PatchOp, path string, a, b any) error {
	ma, aObj := a.(map[string]any)
	mb, bObj := b.(map[string]any)
	if !aObj || !bObj {
		if jsonEqual(a, b) {
			return nil
		}
		v, err := encodeJSON(b)
		if err != nil {
			return err
		}
		*ops = append(*ops, PatchOp{Op: "replace", Path: path, Value: v})
		return nil
	}
	keys := make([]string, 0, len(ma)+len(mb))
	for k := range ma {
		keys = append(keys, k)
	}
	for k := range mb {
		if _, ok := ma[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		p := path + "/" + escapePointer(k)
		va, inA := ma[k]
		vb, inB := mb[k]
		switch {
		case !inB:
			*ops = append(*ops, PatchOp{Op: "remove", Path: p})
		case !inA:
			v, err := encodeJSON(vb)
			if err != nil {
				return err
			}
			*ops = append(*ops, PatchOp{Op: "add", Path: p, Value: v})
		default:
			if err := diff(ops, p, va, vb); err != nil {
				return err
			}
		}
	}
	return nil
}

// escapePointer escapes one reference token of a JSON Pointer (RFC 6901).
func escapePointer(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// JSONEqual reports whether two JSON texts hold equal values: objects with
// the same keys and equal values, whatever their order; arrays with equal
// elements in the same order; numbers of the same value. Invalid JSON is
// equal to nothing.
func JSONEqual(a, b json.RawMessage) bool {
	va, err := decodeJSON(a)
	if err != nil {
		return false
	}
	vb, err := decodeJSON(b)
	if err != nil {
		return false
	}
	return jsonEqual(va, vb)
}

// jsonEqual compares two values decoded by decodeJSON.
func jsonEqual(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !jsonEqual(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case json.Number:
		y, ok := b.(json.Number)
		return ok && numbersEqual(x, y)
	default: // string, bool, nil
		return a == b
	}
}

// numbersEqual compares two JSON numbers by value, exactly, in time
// linear in their length (no big.Rat: "1e999999999" would take forever).
func numbersEqual(a, b json.Number) bool {
	if a == b {
		return true
	}
	na, ok1 := canonicalNumber(string(a))
	nb, ok2 := canonicalNumber(string(b))
	return ok1 && ok2 && na.neg == nb.neg && na.digits == nb.digits && na.exp.Cmp(nb.exp) == 0
}

// number is a JSON number as sign, significant digits without leading or
// trailing zeros, and a power of ten: -1.50e2 is {true, "15", 1}. Zero is
// {false, "", 0}.
type number struct {
	neg    bool
	digits string
	exp    *big.Int
}

// canonicalNumber parses a JSON number into its canonical form.
func canonicalNumber(s string) (number, bool) {
	n := number{exp: new(big.Int)}
	if strings.HasPrefix(s, "-") {
		n.neg, s = true, s[1:]
	}
	mant, e, hasExp := strings.Cut(strings.ToLower(s), "e")
	if hasExp {
		if _, ok := n.exp.SetString(strings.TrimPrefix(e, "+"), 10); !ok {
			return n, false
		}
	}
	whole, frac, _ := strings.Cut(mant, ".")
	n.exp.Sub(n.exp, big.NewInt(int64(len(frac))))
	digits := strings.TrimLeft(whole+frac, "0")
	trimmed := strings.TrimRight(digits, "0")
	n.exp.Add(n.exp, big.NewInt(int64(len(digits)-len(trimmed))))
	n.digits = trimmed
	if n.digits == "" {
		return number{exp: new(big.Int)}, true
	}
	return n, true
}

// decodeJSON decodes one JSON value, keeping numbers as json.Number.
func decodeJSON(raw json.RawMessage) (any, error) {
	if !json.Valid(raw) {
		return nil, fmt.Errorf("not valid JSON")
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// encodeJSON encodes v compactly, keys sorted, without escaping HTML.
func encodeJSON(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
