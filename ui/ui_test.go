package ui

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
)

// get serves one request through Handler.
func get(t *testing.T, method, target string, header map[string]string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	req.Host = "127.0.0.1:7878"
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	Handler().ServeHTTP(rec, req)
	return rec.Result()
}

func body(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var assetURL = regexp.MustCompile(`/assets/([0-9a-f]{16})/app\.js`)

func TestIndex(t *testing.T) {
	resp := get(t, http.MethodGet, "/", nil)
	if got, want := resp.StatusCode, http.StatusOK; got != want {
		t.Fatalf("status %d, want %d", got, want)
	}
	for k, want := range map[string]string{
		"Content-Type":           "text/html; charset=utf-8",
		"Cache-Control":          "no-cache",
		"X-Content-Type-Options": "nosniff",
		"Referrer-Policy":        "no-referrer",
		"X-Frame-Options":        "DENY",
	} {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	csp := resp.Header.Get("Content-Security-Policy")
	for _, want := range []string{
		"default-src 'self'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'",
		"object-src 'none'", "base-uri 'none'", "connect-src 'self' ws://127.0.0.1:7878 wss://127.0.0.1:7878",
	} {
		if !strings.Contains(csp, want) {
			t.Errorf("Content-Security-Policy %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe") {
		t.Errorf("Content-Security-Policy %q allows something unsafe", csp)
	}
	html := body(t, resp)
	if !assetURL.MatchString(html) {
		t.Errorf("index.html does not load a versioned app.js:\n%s", html)
	}
	if strings.Contains(html, versionPlaceholder) {
		t.Error("index.html still holds the version placeholder")
	}

	etag := resp.Header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag on index.html")
	}
	again := get(t, http.MethodGet, "/", map[string]string{"If-None-Match": etag})
	if got, want := again.StatusCode, http.StatusNotModified; got != want {
		t.Errorf("conditional GET: status %d, want %d", got, want)
	}
	head := get(t, http.MethodHead, "/", nil)
	if got := body(t, head); head.StatusCode != http.StatusOK || got != "" {
		t.Errorf("HEAD: status %d, body %q; want 200 and no body", head.StatusCode, got)
	}
}

func TestAssets(t *testing.T) {
	html := body(t, get(t, http.MethodGet, "/", nil))
	version := assetURL.FindStringSubmatch(html)[1]

	resp := get(t, http.MethodGet, "/assets/"+version+"/app.js", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("app.js: status %d", resp.StatusCode)
	}
	if got, want := resp.Header.Get("Content-Type"), "text/javascript; charset=utf-8"; got != want {
		t.Errorf("Content-Type = %q, want %q", got, want)
	}
	if got := resp.Header.Get("Cache-Control"); !strings.Contains(got, "immutable") {
		t.Errorf("Cache-Control = %q, want immutable", got)
	}
	if resp.Header.Get("Content-Security-Policy") == "" {
		t.Error("assets are served without a Content-Security-Policy")
	}

	for _, target := range []string{
		"/assets/0000000000000000/app.js", // another build
		"/assets/" + version + "/nope.js",
		"/assets/" + version,
		"/assets/" + version + "/../index.html",
		"/nope",
	} {
		if got := get(t, http.MethodGet, target, nil).StatusCode; got != http.StatusNotFound {
			t.Errorf("GET %s: status %d, want 404", target, got)
		}
	}
	if got := get(t, http.MethodPost, "/", nil).StatusCode; got != http.StatusMethodNotAllowed {
		t.Errorf("POST /: status %d, want 405", got)
	}
}

func TestConnectSrcIgnoresOddHosts(t *testing.T) {
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.Host = "evil.example; script-src *"
	rec := httptest.NewRecorder()
	Handler().ServeHTTP(rec, req)
	csp := rec.Result().Header.Get("Content-Security-Policy")
	if strings.Contains(csp, "evil") || !strings.Contains(csp, "connect-src 'self';") {
		t.Errorf("Content-Security-Policy %q: an odd Host must not reach it", csp)
	}
}

func TestVersionFollowsContent(t *testing.T) {
	fsys := fstest.MapFS{
		"assets/index.html": {Data: []byte(`<script type="module" src="{{ASSETS}}/app.js"></script>`)},
		"assets/app.js":     {Data: []byte(`console.log(1)`)},
	}
	a, err := loadFS(fsys, "assets")
	if err != nil {
		t.Fatal(err)
	}
	fsys["assets/app.js"] = &fstest.MapFile{Data: []byte(`console.log(2)`)}
	b, err := loadFS(fsys, "assets")
	if err != nil {
		t.Fatal(err)
	}
	if a.version == b.version {
		t.Errorf("version %s did not change with app.js", a.version)
	}
	if got, want := string(b.index.body), `<script type="module" src="/assets/`+b.version+`/app.js"></script>`; got != want {
		t.Errorf("index = %s, want %s", got, want)
	}
}

// TestNoInlineCode guards the CSP and the XSS rules in the sources: no
// inline script or style in the HTML, no HTML built from strings in JS,
// and every module import resolves to an embedded file.
func TestNoInlineCode(t *testing.T) {
	html, err := fs.ReadFile(embedded, "assets/index.html")
	if err != nil {
		t.Fatal(err)
	}
	for _, re := range []*regexp.Regexp{
		regexp.MustCompile(`<script\b[^>]*>[^<]+</script>`),
		regexp.MustCompile(`<style\b`),
		regexp.MustCompile(`\sstyle=`),
		regexp.MustCompile(`\son[a-z]+=`),
	} {
		if m := re.Find(html); m != nil {
			t.Errorf("index.html has inline code: %s", m)
		}
	}
	forbidden := regexp.MustCompile(`\.innerHTML|\.outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|setAttribute\("style"|\.style\.`)
	imports := regexp.MustCompile(`from "\./([^"]+)"`)
	files, _ := fs.Glob(embedded, "assets/*.js")
	if len(files) == 0 {
		t.Fatal("no JavaScript assets")
	}
	for _, name := range files {
		src, err := fs.ReadFile(embedded, name)
		if err != nil {
			t.Fatal(err)
		}
		if m := forbidden.Find(src); m != nil {
			t.Errorf("%s uses %s", name, m)
		}
		for _, m := range imports.FindAllSubmatch(src, -1) {
			if _, err := fs.Stat(embedded, "assets/"+string(m[1])); err != nil {
				t.Errorf("%s imports %s, which is not embedded", name, m[1])
			}
		}
	}
}
