package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hitl-sh/hitl"
)

// Request bodies: read within bounds of size and time, decoded as one
// JSON object, and refused with a message that names the field and the
// JSON types involved, never a Go type or a piece of the body.

// errEmptyBody is the message for a request without a body.
const errEmptyBody = "request body is empty; send a JSON object"

// maxBodyBytes bounds every request body.
const maxBodyBytes = 1 << 20

// decodeJSON reads a JSON request body into v: at most maxBodyBytes (413
// beyond), valid UTF-8, one JSON value, an object. Unknown fields are
// allowed, so newer clients work with older servers. Any Content-Type is
// accepted (curl -d sends a form type); cross-origin browser requests are
// refused before this by the CSRF protection in Handler.
func decodeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	data, err := readBody(w, r)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return hitl.Errorf(hitl.EINVALID, "%s", errEmptyBody)
	}
	return unmarshalBody(data, v)
}

// readBody reads the whole request body: at most maxBodyBytes (413
// beyond), and within the read deadline that bodyDeadline set (408
// beyond).
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	var tooBig *http.MaxBytesError
	switch {
	case err == nil:
		return data, nil
	case errors.As(err, &tooBig):
		return nil, hitl.Errorf(hitl.ETOOLARGE, "request body is larger than %d bytes", maxBodyBytes)
	case errors.Is(err, os.ErrDeadlineExceeded):
		w.Header().Set("Connection", "close")
		return nil, hitl.Errorf(codeTimeout, "the request body did not arrive in time")
	}
	return nil, hitl.Errorf(hitl.EINVALID, "read request body: %v", err)
}

// unmarshalBody decodes data, a JSON object, into v, the struct a route
// takes. Text must be Unicode: invalid UTF-8, or an escaped UTF-16
// surrogate without its pair, would otherwise be replaced by U+FFFD
// without a word, changing what the caller sent.
func unmarshalBody(data []byte, v any) error {
	if !utf8.Valid(data) {
		return hitl.Errorf(hitl.EINVALID, "request body is not valid UTF-8")
	}
	if err := json.Unmarshal(data, v); err != nil {
		return hitl.Errorf(hitl.EINVALID, "%s", bodyProblem(err, reflect.TypeOf(v)))
	}
	if i := loneSurrogate(data); i >= 0 {
		return hitl.Errorf(hitl.EINVALID, "request body has an unpaired UTF-16 surrogate escape at byte %d, which is not a character", i)
	}
	return nil
}

// bodyProblem describes a JSON decoding error into a value of type t by
// fields and JSON types, without echoing the body.
func bodyProblem(err error, t reflect.Type) string {
	var syn *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	var timeErr *time.ParseError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("malformed JSON: syntax error at byte %d", syn.Offset)
	case errors.As(err, &typeErr) && typeErr.Field == "":
		return fmt.Sprintf("the body must be %s, got %s", jsonType(typeErr.Type), jsonValue(typeErr.Value))
	case errors.As(err, &typeErr):
		what := "field " + typeErr.Field
		if ft := fieldType(t, typeErr.Field); ft != nil && (ft.Kind() == reflect.Slice || ft.Kind() == reflect.Array) && ft != typeErr.Type {
			what = "each item of field " + typeErr.Field
		}
		return fmt.Sprintf("%s must be %s, got %s", what, jsonType(typeErr.Type), jsonValue(typeErr.Value))
	case errors.As(err, &timeErr):
		return "a time must be an RFC 3339 string, such as 2030-01-02T15:04:05Z"
	}
	// The fields' own decoders (options, notify) say what is wrong in
	// their own words, which name fields and never echo values.
	return strings.TrimPrefix(err.Error(), "json: ")
}

// jsonType says which JSON values decode into t.
func jsonType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number in range"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "a JSON object"
	}
	return "another type of JSON value"
}

// jsonValue names the kind of JSON value encoding/json reports in an
// UnmarshalTypeError ("array", "number 1.5", …).
func jsonValue(v string) string {
	switch {
	case v == "array":
		return "an array"
	case v == "object":
		return "an object"
	case v == "string":
		return "a string"
	case v == "bool":
		return "true or false"
	case v == "number":
		return "a number"
	case strings.HasPrefix(v, "number "):
		return strings.TrimPrefix(v, "number ")
	}
	return v
}

// fieldType returns the type of the field at the dotted JSON path in t
// ("targets.users"), going through pointers, and through the elements of
// arrays and maps on the way; nil when there is none.
func fieldType(t reflect.Type, path string) reflect.Type {
	for name := range strings.SplitSeq(path, ".") {
		for t.Kind() == reflect.Pointer || (t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map) {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return nil
		}
		f, ok := jsonField(t, name)
		if !ok {
			return nil
		}
		t = f.Type
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// jsonField finds the field of struct type t that JSON calls name.
func jsonField(t reflect.Type, name string) (reflect.StructField, bool) {
	for f := range t.Fields() {
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == name || tag == "" && strings.EqualFold(f.Name, name) {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// loneSurrogate returns the offset of the first \u escape in the JSON text
// data that is half of a UTF-16 surrogate pair without the other half, or
// -1. data is valid JSON.
func loneSurrogate(data []byte) int {
	if !bytes.Contains(data, []byte(`\u`)) {
		return -1
	}
	inString := false
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case c == '"':
			inString = !inString
		case c == '\\' && inString:
			if data[i+1] != 'u' {
				i++ // \" \\ \n …
				continue
			}
			r := hex4(data[i+2 : i+6])
			switch {
			case r >= 0xDC00 && r <= 0xDFFF:
				return i // a second half alone
			case r >= 0xD800 && r <= 0xDBFF:
				if i+12 > len(data) || data[i+6] != '\\' || data[i+7] != 'u' {
					return i
				}
				if lo := hex4(data[i+8 : i+12]); lo < 0xDC00 || lo > 0xDFFF {
					return i
				}
				i += 6
			}
			i += 5
		}
	}
	return -1
}

// hex4 reads four hexadecimal digits.
func hex4(b []byte) rune {
	var r rune
	for _, c := range b {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		}
	}
	return r
}

// requireValue refuses an answer without a value: absent and null are the
// same mistake, answered alike (400 "value is required") on every respond
// route. name is the field's name on the route ("value", "response").
func requireValue(name string, v json.RawMessage) error {
	if v = bytes.TrimSpace(v); len(v) == 0 || bytes.Equal(v, []byte("null")) {
		return hitl.Errorf(hitl.EINVALID, "%s is required", name)
	}
	return nil
}
