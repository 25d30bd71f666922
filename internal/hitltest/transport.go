package hitltest

import (
	"bytes"
	"io"
	"net/http"
	"testing"
)

// ValidatingTransport returns a RoundTripper that sends requests through
// rt (nil means http.DefaultTransport) and checks every response it gets
// against the OpenAPI document as ValidateResponses does, on the client's
// side: for a server the test runs as another process (hitl serve). The
// body of an event stream is passed on unread; any other body is read
// whole first, and passed on as it came.
func ValidatingTransport(t testing.TB, rt http.RoundTripper) http.RoundTripper {
	t.Helper()
	v, err := documentValidator()
	if err != nil {
		t.Fatal(err)
	}
	if rt == nil {
		rt = http.DefaultTransport
	}
	c := &checker{v: v}
	t.Cleanup(func() {
		for _, f := range c.done() {
			t.Errorf("response not described by openapi/openapi.json: %s", f)
		}
	})
	return &validatingTransport{rt: rt, c: c}
}

// validatingTransport is ValidatingTransport's RoundTripper.
type validatingTransport struct {
	rt http.RoundTripper
	c  *checker
}

// RoundTrip sends req and checks the response.
func (vt *validatingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := vt.rt.RoundTrip(req)
	if err != nil || skipped(req) || resp.StatusCode == http.StatusSwitchingProtocols {
		return resp, err
	}
	if isStream(resp.Header) {
		vt.c.check(req, resp.StatusCode, resp.Header, nil)
		return resp, nil
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{err}))
	if err == nil {
		vt.c.check(req, resp.StatusCode, resp.Header, body)
	}
	return resp, nil
}

// errReader fails every read with err, or reports the end when err is nil.
type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) {
	if r.err == nil {
		return 0, io.EOF
	}
	return 0, r.err
}
