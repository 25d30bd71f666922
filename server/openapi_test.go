package server_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl/email"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/mcpserver"
	"github.com/hitl-sh/hitl/openapi"
	"github.com/hitl-sh/hitl/server"
	"github.com/hitl-sh/hitl/slack"
	"github.com/hitl-sh/hitl/webhook"
	"github.com/hitl-sh/hitl/webpush"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
)

// TestOpenAPIDocumentsEveryRoute checks that every route the server
// registers (with the Slack channel, MCP and the webhooks, so their routes are there
// too) is an operation of the OpenAPI document, and that every operation
// of the document is served by one of them.
func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	s := hitltest.Start(t, nil)
	sl, err := slack.New(s.Broker, s.Store, nil)
	if err != nil {
		t.Fatal(err)
	}
	hooks := webhook.New(s.Store, s.Broker, nil)
	em := email.New(s.Broker, s.Store, nil)
	wp := webpush.New(s.Broker, s.Store, nil)
	routes := server.Routes(server.New(s.Broker, &server.Options{Slack: sl, Email: em, Push: wp, MCP: mcpserver.New(s.Broker, nil).Handler(), Webhooks: hooks, Receipts: s.Engine.Receipts}))
	ops := documentOperations(t)

	// Every route is in the document: the document, as a router, serves
	// a request the route serves.
	docs := http.NewServeMux()
	for _, op := range ops {
		method, path, _ := strings.Cut(op, " ")
		if path == "/" {
			path = "/{$}"
		}
		docs.HandleFunc(method+" "+path, func(http.ResponseWriter, *http.Request) {})
	}
	for _, route := range routes {
		method, path := splitPattern(route)
		methods := []string{method}
		if method == "" { // every method: the document needs at least one
			methods = []string{"GET", "POST", "PUT", "PATCH", "DELETE"}
		}
		found := false
		for _, m := range methods {
			if _, pattern := docs.Handler(httptest.NewRequest(m, samplePath(path), nil)); pattern != "" {
				found = true
			}
		}
		if !found {
			t.Errorf("route %q is not in openapi/openapi.json", route)
		}
	}

	// Every operation is a route: the server's router (or the binary's)
	// has a route for a request for it.
	served := http.NewServeMux()
	for _, route := range routes {
		served.HandleFunc(route, func(http.ResponseWriter, *http.Request) {})
	}
	for _, op := range ops {
		method, path, _ := strings.Cut(op, " ")
		if _, pattern := served.Handler(httptest.NewRequest(method, samplePath(path), nil)); pattern == "" {
			t.Errorf("operation %s in openapi/openapi.json is not a route of the server", op)
		}
	}
	for _, want := range []string{"POST /slack/events", "POST /slack/interactivity", "/mcp"} {
		if !slices.Contains(routes, want) {
			t.Errorf("route %s is not registered by routes()", want)
		}
	}
}

// documentOperations returns every operation of the document as "METHOD
// /path".
func documentOperations(t *testing.T) []string {
	t.Helper()
	doc, err := libopenapi.NewDocument(openapi.JSON)
	if err != nil {
		t.Fatal(err)
	}
	model, err := doc.BuildV3Model()
	if err != nil {
		t.Fatalf("build the OpenAPI model: %v", err)
	}
	var ops []string
	for path, item := range model.Model.Paths.PathItems.FromOldest() {
		for method := range item.GetOperations().FromOldest() {
			ops = append(ops, strings.ToUpper(method)+" "+path)
		}
	}
	if len(ops) == 0 {
		t.Fatal("the document has no operations")
	}
	return ops
}

// splitPattern splits a ServeMux pattern into its method ("" for any) and
// path.
func splitPattern(pattern string) (method, path string) {
	if m, p, ok := strings.Cut(pattern, " "); ok {
		return m, strings.TrimSpace(p)
	}
	return "", pattern
}

var wildcard = regexp.MustCompile(`\{[^}]*\}`)

// samplePath returns a path that the route pattern or OpenAPI path
// template p matches: wildcards filled in, a trailing slash (a prefix)
// followed by more.
func samplePath(p string) string {
	p = strings.ReplaceAll(p, "{$}", "")
	p = wildcard.ReplaceAllStringFunc(p, func(w string) string {
		if strings.HasSuffix(w, "...}") {
			return "x/y"
		}
		return "x"
	})
	if len(p) > 1 && strings.HasSuffix(p, "/") {
		p += "x/y"
	}
	return p
}

// TestOpenAPIDocumentIsValid checks the document against the OpenAPI 3.1
// specification's schema.
func TestOpenAPIDocumentIsValid(t *testing.T) {
	doc, err := libopenapi.NewDocument(openapi.JSON)
	if err != nil {
		t.Fatal(err)
	}
	if v := doc.GetVersion(); v != "3.1.0" {
		t.Errorf("openapi version %q, want 3.1.0", v)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatalf("build the validator: %v", errs)
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		for _, e := range verrs {
			t.Errorf("openapi/openapi.json: %s", e.Error())
		}
	}
}

// TestOpenAPIServedToAnyone checks that GET /api/v1/openapi.json serves the
// document without credentials once authentication is on, and that HEAD
// works too.
func TestOpenAPIServedToAnyone(t *testing.T) {
	ts := newAuthServer(t, server.AuthOptions{})
	resp, body := ts.call(t, ts.anon, "GET", "/api/v1/openapi.json", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, want 200; body %s", resp.StatusCode, body)
	}
	if got := resp.Header.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type %q, want application/json", got)
	}
	if !bytes.Equal(body, openapi.JSON) {
		t.Errorf("served %d bytes, not the openapi package's %d", len(body), len(openapi.JSON))
	}
	resp, body = ts.call(t, ts.anon, "HEAD", "/api/v1/openapi.json", nil)
	if resp.StatusCode != http.StatusOK || len(body) != 0 {
		t.Errorf("HEAD: status %d with %d bytes, want 200 and none", resp.StatusCode, len(body))
	}
	// Still a route like the others: credentials that are wrong are
	// ignored on a public route, not refused.
	resp, _ = ts.call(t, actor{name: "stranger", token: "hitl_nope"}, "GET", "/api/v1/openapi.json", nil)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("with a bad token: status %d, want 200", resp.StatusCode)
	}
}
