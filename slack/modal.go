package slack

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/hitl-sh/hitl"
	"github.com/slack-go/slack"
)

// Modals: a text input for free text, and for a form one input per
// property of its schema, where each maps to a Block Kit input (strings,
// enums, numbers, booleans, dates). A form that does not map (nested
// objects, arrays, combinators on a property) is answered in the web
// inbox instead. Whatever is submitted goes through the engine, which
// validates it against the whole schema.

const (
	// answerBlock and valueAction name the free-text input.
	answerBlock = "answer"
	valueAction = "v"
	// maxFields bounds a form modal (Slack allows 100 blocks).
	maxFields = 50
	// callbackAnswer marks hitl's modals.
	callbackAnswer = "hitl_answer"
)

// Kinds of form fields.
const (
	fieldText    = "text"
	fieldNumber  = "number"
	fieldInteger = "integer"
	fieldBool    = "boolean"
	fieldDate    = "date"
	fieldSelect  = "select"
)

// field is one input of a form modal, from one property of the schema.
type field struct {
	name      string
	kind      string
	label     string
	hint      string
	required  bool
	multiline bool
	enum      []json.RawMessage
	min, max  string // numbers, as JSON text
	maxLength int
}

// property is the part of a property's schema that maps to an input.
type property struct {
	Type        json.RawMessage   `json:"type"`
	Enum        []json.RawMessage `json:"enum"`
	Format      string            `json:"format"`
	Title       string            `json:"title"`
	Description string            `json:"description"`
	Minimum     json.Number       `json:"minimum"`
	Maximum     json.Number       `json:"maximum"`
	MaxLength   int               `json:"maxLength"`
	// Any of these makes a property too rich for one input.
	Ref   json.RawMessage `json:"$ref"`
	Const json.RawMessage `json:"const"`
	OneOf json.RawMessage `json:"oneOf"`
	AnyOf json.RawMessage `json:"anyOf"`
	AllOf json.RawMessage `json:"allOf"`
	Items json.RawMessage `json:"items"`
}

// formFields maps a form schema to inputs, in the order its properties
// are written; false when some property does not map.
func formFields(schema json.RawMessage) ([]field, bool) {
	var root struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal(schema, &root); err != nil || len(root.Properties) == 0 {
		return nil, false
	}
	names, props, err := orderedObject(root.Properties)
	if err != nil || len(names) == 0 || len(names) > maxFields {
		return nil, false
	}
	required := map[string]bool{}
	for _, r := range root.Required {
		required[r] = true
	}
	fields := make([]field, 0, len(names))
	for _, name := range names {
		var p property
		if err := json.Unmarshal(props[name], &p); err != nil {
			return nil, false
		}
		if p.Ref != nil || p.Const != nil || p.OneOf != nil || p.AnyOf != nil || p.AllOf != nil || p.Items != nil {
			return nil, false
		}
		f := field{name: name, label: p.Title, hint: p.Description, required: required[name],
			min: string(p.Minimum), max: string(p.Maximum), maxLength: p.MaxLength}
		if f.label == "" {
			f.label = name
		}
		var typ string
		if p.Type != nil && json.Unmarshal(p.Type, &typ) != nil {
			return nil, false // a list of types
		}
		switch {
		case len(p.Enum) > 0:
			if len(p.Enum) > maxSelect {
				return nil, false
			}
			for _, v := range p.Enum {
				if t := bytes.TrimSpace(v); len(t) == 0 || t[0] == '{' || t[0] == '[' || string(t) == "null" {
					return nil, false
				}
			}
			f.kind, f.enum = fieldSelect, p.Enum
		case typ == "string" && p.Format == "date":
			f.kind = fieldDate
		case typ == "string" && p.Format == "date-time", typ == "string" && p.Format == "time":
			return nil, false
		case typ == "string":
			f.kind = fieldText
			f.multiline = p.MaxLength == 0 || p.MaxLength > 150
		case typ == "integer":
			f.kind = fieldInteger
		case typ == "number":
			f.kind = fieldNumber
		case typ == "boolean":
			f.kind = fieldBool
		default:
			return nil, false
		}
		fields = append(fields, f)
	}
	return fields, true
}

// orderedObject returns the keys of a JSON object in the order written,
// and their values.
func orderedObject(raw json.RawMessage) ([]string, map[string]json.RawMessage, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	t, err := d.Token()
	if err != nil || t != json.Delim('{') {
		return nil, nil, fmt.Errorf("not an object")
	}
	var names []string
	vals := map[string]json.RawMessage{}
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil, nil, err
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return nil, nil, err
		}
		if _, dup := vals[k]; !dup {
			names = append(names, k)
		}
		vals[k] = v
	}
	return names, vals, nil
}

// blockID names the input block of field i.
func blockID(i int) string { return "f" + strconv.Itoa(i) }

// answerModal returns the modal that answers in, carrying token (the
// button's) in its private metadata; false when in is not answered with a
// modal.
func answerModal(in *hitl.Interaction, token string) (slack.ModalViewRequest, bool) {
	v := slack.ModalViewRequest{
		Type:            slack.VTModal,
		Title:           plain("Answer", 24),
		Submit:          plain("Submit", 24),
		Close:           plain("Cancel", 24),
		CallbackID:      callbackAnswer,
		PrivateMetadata: token,
	}
	q := section(truncateMrkdwn(in.Question, maxSectionText))
	switch in.Type {
	case hitl.TypeHandoff:
		el := slack.NewPlainTextInputBlockElement(nil, valueAction)
		el.Multiline = true
		el.MaxLength = 3000
		v.Title, v.Submit = plain("Reply", 24), plain("Send reply", 24)
		v.Blocks.BlockSet = []slack.Block{q, slack.NewInputBlock(answerBlock, plain("Your reply", 2000), nil, el)}
		return v, true
	case hitl.TypeFreeText:
		el := slack.NewPlainTextInputBlockElement(nil, valueAction)
		el.Multiline = true
		el.MaxLength = 3000
		var def string
		if json.Unmarshal(in.DefaultResponse, &def) == nil && len(def) <= 3000 {
			el.InitialValue = def
		}
		v.Blocks.BlockSet = []slack.Block{q, slack.NewInputBlock(answerBlock, plain("Your answer", 2000), nil, el)}
		return v, true
	case hitl.TypeForm:
		fields, ok := formFields(in.FormSchema)
		if !ok {
			return v, false
		}
		v.Title = plain("Fill in", 24)
		var defaults map[string]json.RawMessage
		_ = json.Unmarshal(in.DefaultResponse, &defaults)
		v.Blocks.BlockSet = []slack.Block{q}
		for i, f := range fields {
			v.Blocks.BlockSet = append(v.Blocks.BlockSet, f.input(i, defaults[f.name]))
		}
		return v, true
	}
	return v, false
}

// input returns the input block of field f, the i-th, with its default.
func (f field) input(i int, def json.RawMessage) *slack.InputBlock {
	var hint *slack.TextBlockObject
	if f.hint != "" {
		hint = plain(f.hint, 2000)
	}
	var el slack.BlockElement
	optional := !f.required
	switch f.kind {
	case fieldText:
		e := slack.NewPlainTextInputBlockElement(nil, valueAction)
		e.Multiline = f.multiline
		if f.maxLength > 0 && f.maxLength <= 3000 {
			e.MaxLength = f.maxLength
		}
		_ = json.Unmarshal(def, &e.InitialValue)
		el = e
	case fieldNumber, fieldInteger:
		e := slack.NewNumberInputBlockElement(nil, valueAction, f.kind == fieldNumber)
		e.MinValue, e.MaxValue = f.min, f.max
		var n json.Number
		if json.Unmarshal(def, &n) == nil {
			e.InitialValue = n.String()
		}
		el = e
	case fieldBool:
		yes := slack.NewOptionBlockObject("true", plain("Yes", maxOptionText), nil)
		e := slack.NewCheckboxGroupsBlockElement(valueAction, yes)
		var b bool
		if json.Unmarshal(def, &b) == nil && b {
			e.InitialOptions = []*slack.OptionBlockObject{yes}
		}
		el = e
		optional = true // unchecked is false
	case fieldDate:
		e := slack.NewDatePickerBlockElement(valueAction)
		_ = json.Unmarshal(def, &e.InitialDate)
		el = e
	case fieldSelect:
		opts := make([]*slack.OptionBlockObject, len(f.enum))
		var initial *slack.OptionBlockObject
		for j, v := range f.enum {
			opts[j] = slack.NewOptionBlockObject(strconv.Itoa(j), plain(enumText(v), maxOptionText), nil)
			if def != nil && jsonEqual(def, v) {
				initial = opts[j]
			}
		}
		e := slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, plain("Choose…", maxOptionText), valueAction, opts...)
		e.InitialOption = initial
		el = e
	}
	b := slack.NewInputBlock(blockID(i), plain(f.label, 2000), hint, el)
	b.Optional = optional
	return b
}

// enumText shows an enum value: a string as itself, anything else as JSON.
func enumText(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return string(bytes.TrimSpace(v))
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && fmt.Sprint(x) == fmt.Sprint(y)
}

// modalValue reads the answer to in from a submitted modal's state, or
// the errors to show by block.
func modalValue(in *hitl.Interaction, state *slack.ViewState) (json.RawMessage, map[string]string) {
	if in.Type == hitl.TypeFreeText || in.Type == hitl.TypeHandoff {
		a, _ := stateValue(state, answerBlock)
		v, _ := json.Marshal(a.Value)
		return v, nil
	}
	fields, ok := formFields(in.FormSchema)
	if !ok {
		return nil, map[string]string{}
	}
	obj, errs := readFields(fields, state)
	if len(errs) > 0 {
		return nil, errs
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, map[string]string{blockID(0): "This answer cannot be sent"}
	}
	return b, nil
}

// stateValue returns the input of block in a submitted modal's state.
func stateValue(state *slack.ViewState, block string) (slack.BlockAction, bool) {
	if state == nil {
		return slack.BlockAction{}, false
	}
	a, ok := state.Values[block][valueAction]
	return a, ok
}

// readFields reads the inputs of fields from a submitted modal's state:
// the value of each field given (a text field also when empty, if it is
// required; a boolean always), or the errors to show by block.
func readFields(fields []field, state *slack.ViewState) (map[string]json.RawMessage, map[string]string) {
	obj := map[string]json.RawMessage{}
	errs := map[string]string{}
	for i, f := range fields {
		a, _ := stateValue(state, blockID(i))
		var v json.RawMessage
		switch f.kind {
		case fieldText:
			if a.Value != "" || f.required {
				v, _ = json.Marshal(a.Value)
			}
		case fieldNumber, fieldInteger:
			if a.Value == "" {
				break
			}
			n, err := strconv.ParseFloat(strings.TrimSpace(a.Value), 64)
			switch {
			case err != nil || math.IsInf(n, 0) || math.IsNaN(n):
				errs[blockID(i)] = "Enter a number"
			case f.kind == fieldInteger && n != math.Trunc(n):
				errs[blockID(i)] = "Enter a whole number"
			default:
				v, _ = json.Marshal(n)
			}
		case fieldBool:
			v, _ = json.Marshal(len(a.SelectedOptions) > 0)
		case fieldDate:
			if a.SelectedDate != "" {
				v, _ = json.Marshal(a.SelectedDate)
			}
		case fieldSelect:
			if a.SelectedOption.Value == "" {
				break
			}
			j, err := strconv.Atoi(a.SelectedOption.Value)
			if err != nil || j < 0 || j >= len(f.enum) {
				errs[blockID(i)] = "Choose one of the options"
				break
			}
			v = f.enum[j]
		}
		if v != nil {
			obj[f.name] = v
		}
	}
	return obj, errs
}

// firstBlock names the block an error about the whole answer is shown on.
func firstBlock(in *hitl.Interaction) string {
	if in.Type == hitl.TypeFreeText || in.Type == hitl.TypeHandoff {
		return answerBlock
	}
	return blockID(0)
}
