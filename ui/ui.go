// Package ui is hitl's web inbox: plain HTML, CSS and ES modules embedded in
// the binary and served at "/", talking only to the public HTTP API and /ws.
//
// There is no build step. Assets are served under /assets/<version>/, where
// the version is a hash of every asset, so they can be cached forever and a
// new binary is picked up at the next page load (index.html is never
// cached). Every response carries a strict Content-Security-Policy: no
// inline script or style, no framing, connections only to the same origin.
package ui

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"regexp"
	"strings"
	"sync"
	"time"
)

//go:embed assets
var embedded embed.FS

// assetPrefix is where versioned assets are served.
const assetPrefix = "/assets/"

// versionPlaceholder in index.html is replaced by the asset base URL.
const versionPlaceholder = "{{ASSETS}}"

// asset is one file ready to serve.
type asset struct {
	body        []byte
	contentType string
	etag        string
}

// bundle is every asset, loaded and hashed once.
type bundle struct {
	version string            // hash of every asset but index.html
	index   asset             // index.html with asset URLs filled in
	embed   asset             // the <hitl-prompt> entry module (EmbedScriptPath)
	files   map[string]*asset // by name under assets/, e.g. "app.js"
}

var (
	loadOnce sync.Once
	loaded   *bundle
	loadErr  error
)

// load reads and hashes the embedded assets.
func load() (*bundle, error) {
	loadOnce.Do(func() { loaded, loadErr = loadFS(embedded, "assets") })
	return loaded, loadErr
}

// loadFS reads every file of dir in fsys into a bundle.
func loadFS(fsys fs.FS, dir string) (*bundle, error) {
	b := &bundle{files: make(map[string]*asset)}
	h := sha256.New()
	var indexHTML []byte
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		name := strings.TrimPrefix(p, dir+"/")
		if name == "index.html" {
			indexHTML = data
			return nil
		}
		// WalkDir visits files in lexical order, so the hash is stable.
		fmt.Fprintf(h, "%s\x00%d\x00", name, len(data))
		h.Write(data)
		b.files[name] = newAsset(name, data)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load web assets: %w", err)
	}
	if indexHTML == nil {
		return nil, fmt.Errorf("load web assets: no index.html")
	}
	b.version = hex.EncodeToString(h.Sum(nil))[:16]
	html := bytes.ReplaceAll(indexHTML, []byte(versionPlaceholder), []byte(assetPrefix+b.version))
	b.index = *newAsset("index.html", html)
	b.embed = *newAsset("hitl-prompt.js", []byte(embedEntry(assetPrefix+b.version)))
	return b, nil
}

func newAsset(name string, data []byte) *asset {
	sum := sha256.Sum256(data)
	return &asset{
		body:        data,
		contentType: contentType(name),
		etag:        `"` + hex.EncodeToString(sum[:])[:24] + `"`,
	}
}

// contentType names the types of the files the inbox is made of; the
// system's MIME table is not consulted, so serving does not depend on it.
func contentType(name string) string {
	switch path.Ext(name) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	case ".png":
		return "image/png"
	case ".json", ".webmanifest":
		return "application/json"
	}
	return "application/octet-stream"
}

// Handler serves the inbox: GET / (index.html), GET /i/<id> (index.html
// too: the page shows its detail view of interaction <id>) and GET
// /assets/<version>/…, GET /sw.js (the service worker) and GET
// /embed/v1/hitl-prompt.js (the embeddable prompt). Mount it on
// "GET /{$}", "GET /i/{id}", "GET /sw.js", "GET /embed/v1/hitl-prompt.js"
// and "GET /assets/"; any other path gets 404.
func Handler() http.Handler {
	b, err := load()
	if err != nil {
		// The assets are compiled in; failing to read them is a build bug.
		panic(err)
	}
	return b
}

// ServeHTTP implements http.Handler.
func (b *bundle) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	setSecurityHeaders(w, r)
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	switch {
	case r.URL.Path == "/" || r.URL.Path == "/index.html" || isDetailPath(r.URL.Path):
		w.Header().Set("Cache-Control", "no-cache")
		serve(w, r, &b.index)
	case r.URL.Path == EmbedScriptPath:
		// A stable address for other sites' pages; the code it imports is
		// hashed and cached for good, so a new binary is picked up within
		// minutes.
		w.Header().Set("Cache-Control", "public, max-age=300")
		serve(w, r, &b.embed)
	case r.URL.Path == ServiceWorkerPath:
		// At the root, so that its scope is the whole inbox; never
		// cached, so that browsers see a new one at once.
		w.Header().Set("Cache-Control", "no-cache")
		serve(w, r, b.files["sw.js"])
	case strings.HasPrefix(r.URL.Path, assetPrefix):
		version, name, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, assetPrefix), "/")
		a := b.files[name]
		if !ok || version != b.version || a == nil {
			// An asset of another build: index.html is never cached, so a
			// reload gets the current one.
			w.Header().Set("Cache-Control", "no-store")
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		serve(w, r, a)
	default:
		http.NotFound(w, r)
	}
}

// EmbedScriptPath is where the <hitl-prompt> custom element is served,
// for other sites' pages: an ES module that imports the element
// (assets/embed.js) from this build's hashed assets.
const EmbedScriptPath = "/embed/v1/hitl-prompt.js"

// embedEntry is the module at EmbedScriptPath for the assets at base.
func embedEntry(base string) string {
	return "// <hitl-prompt>: the hitl question prompt for a chat page (docs/embed.md).\n" +
		"export { HitlPrompt } from \"" + base + "/embed.js\";\n"
}

// ServiceWorkerPath is where the inbox's service worker (assets/sw.js,
// which shows Web Push notifications) is served: at the root, since a
// worker's scope is at most its own directory.
const ServiceWorkerPath = "/sw.js"

// detailPrefix starts the address of the detail view of one interaction.
const detailPrefix = "/i/"

// isDetailPath reports whether p is the address of a detail view: /i/
// and one non-empty segment.
func isDetailPath(p string) bool {
	id, ok := strings.CutPrefix(p, detailPrefix)
	return ok && id != "" && !strings.Contains(id, "/")
}

// serve writes a with its ETag; ServeContent answers If-None-Match with 304
// and HEAD without a body.
func serve(w http.ResponseWriter, r *http.Request, a *asset) {
	w.Header().Set("Content-Type", a.contentType)
	w.Header().Set("ETag", a.etag)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(a.body))
}

// hostPattern is what a Host header may hold to be named in connect-src.
var hostPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9.\-]+(:[0-9]{1,5})?$|^\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?$`)
})

// setSecurityHeaders sets the Content-Security-Policy and its companions.
// connect-src names the WebSocket URLs of the request's own host, because
// 'self' does not cover ws: and wss: in every browser.
func setSecurityHeaders(w http.ResponseWriter, r *http.Request) {
	connect := "'self'"
	if hostPattern().MatchString(r.Host) {
		connect += " ws://" + r.Host + " wss://" + r.Host
	}
	h := w.Header()
	h.Set("Content-Security-Policy", strings.Join([]string{
		"default-src 'self'",
		"script-src 'self'",
		"style-src 'self'",
		"img-src 'self'",
		"font-src 'self'",
		"connect-src " + connect,
		"object-src 'none'",
		"base-uri 'none'",
		"form-action 'none'",
		"frame-ancestors 'none'",
	}, "; "))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=(), payment=(), usb=()")
}
