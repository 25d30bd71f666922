package server

import (
	"encoding/json"
	"io"
	"net/http"
)

// jsonList writes a list response, an object holding one array such as
// {"interactions":[…],"next_cursor":null}, one entry at a time: the
// response is never built whole in memory (a page of 500 large
// interactions was held three times over while encoded), only the entry
// being written.
type jsonList struct {
	w   io.Writer
	enc *json.Encoder
	n   int
	err error
}

// startList writes the 200 status, the headers and the opening of the
// object, up to the array named name.
func startList(w http.ResponseWriter, name string) *jsonList {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	l := &jsonList{w: w, enc: json.NewEncoder(w)}
	l.enc.SetEscapeHTML(false)
	l.write(`{"` + name + `":[`)
	return l
}

// add writes one entry of the array. After a failure (the client left)
// it does nothing and err says why.
func (l *jsonList) add(v any) {
	if l.n > 0 {
		l.write(",")
	}
	l.n++
	if l.err == nil {
		l.err = l.enc.Encode(v)
	}
}

// end closes the array and the object, with tail (the object's other
// members, such as `,"next_cursor":null`) between them, and reports the
// first failure. A response cut short by a failure must not look whole:
// abort it (see abortList).
func (l *jsonList) end(tail string) error {
	l.write("]" + tail + "}\n")
	return l.err
}

func (l *jsonList) write(s string) {
	if l.err == nil {
		_, l.err = io.WriteString(l.w, s)
	}
}

// abortList ends a list response that cannot be completed (its status is
// sent already) by cutting the connection, so the client sees a broken
// response rather than a short list it would take for the whole.
func abortList() {
	panic(http.ErrAbortHandler)
}
