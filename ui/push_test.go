package ui_test

import (
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/turns"
)

// notificationPermission sets the page's notification permission, as the
// person would in the browser's prompt or settings.
func notificationPermission(origin string, setting cdpbrowser.PermissionSetting) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Call(ctx, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
			Permission: &cdpbrowser.PermissionDescriptor{Name: "notifications"}, Setting: setting, Origin: origin,
			BrowserContextID: chromedp.FromContext(ctx).BrowserContextID,
		})
		return err
	})
}

// TestPushOnThisDevice: "Notify me on this device" registers the service
// worker at /sw.js with the whole inbox as its scope and subscribes with
// the server's key. Headless Chromium has no push service, so the
// subscription itself is posted with keys made here, as a browser would.
func TestPushOnThisDevice(t *testing.T) {
	turns.Parallel(t)
	srv := newServerWith(t, serverOptions{push: true})
	p := openPage(t, srv, notificationPermission(srv.URL, cdpbrowser.PermissionSettingGranted))
	p.waitJS(`document.getElementById("push")?.dataset.state === "off" && !document.getElementById("push").hidden`)
	if label := eval[string](p, `document.getElementById("push-btn").textContent`); label != "Notify me on this device" {
		t.Errorf("button = %q; want Notify me on this device", label)
	}
	p.clickTopBar("push-btn")
	// Registering the service worker and trying the browser's push service
	// (there is none headless) takes about 12 s alone, longer on a busy machine.
	p.waitJSFor(`["on", "failed"].includes(document.getElementById("push").dataset.state)`, time.Minute)
	reg := eval[map[string]string](p, `navigator.serviceWorker.getRegistration("/").then(r => ({scope: r?.scope || "", script: (r?.active || r?.waiting || r?.installing)?.scriptURL || ""}))`)
	if reg["scope"] != srv.URL+"/" || reg["script"] != srv.URL+"/sw.js" {
		t.Errorf("service worker registration = %v; want /sw.js with scope %s/", reg, srv.URL)
	}
	if n := eval[int](p, `performance.getEntriesByType("resource").filter(e => e.name.endsWith("/api/v1/push/key")).length`); n == 0 {
		t.Error("the page never fetched the VAPID key")
	}
	if state := eval[string](p, `document.getElementById("push").dataset.state`); state == "failed" {
		// No push service: the page says so rather than claiming it is on.
		if text := eval[string](p, `document.getElementById("push-state").textContent`); !strings.HasPrefix(text, "Could not turn on") {
			t.Errorf("state after a failed subscribe = %q; want Could not turn on…", text)
		}
	}

	// The subscription a browser posts is kept for the person.
	k, _ := ecdh.P256().GenerateKey(rand.Reader)
	auth := make([]byte, 16)
	rand.Read(auth)
	status := eval[int](p, fmt.Sprintf(`fetch("/api/v1/push/subscriptions", {method: "POST", headers: {"Content-Type": "application/json"},
		body: JSON.stringify({endpoint: "http://127.0.0.1:9/push/ui", expirationTime: null, keys: {p256dh: %s, auth: %s}, untargeted: true})}).then(r => r.status)`,
		js(base64.RawURLEncoding.EncodeToString(k.PublicKey().Bytes())), js(base64.RawURLEncoding.EncodeToString(auth))))
	if status != 201 {
		t.Fatalf("POST /api/v1/push/subscriptions from the page: %d; want 201", status)
	}
	subs, err := srv.IDs.(hitl.PushStore).PushSubscriptions(context.Background(), hitl.LocalCaller)
	if err != nil || len(subs) != 1 || subs[0].Endpoint != "http://127.0.0.1:9/push/ui" || !subs[0].Untargeted {
		t.Fatalf("subscriptions = %+v, %v; want the one posted, for %s", subs, err, hitl.LocalCaller)
	}
}

// TestPushStates: the control says when the browser blocks notifications
// or has no Web Push, and is not in the page when the server does not run
// it.
func TestPushStates(t *testing.T) {
	turns.Parallel(t)
	srv := newServerWith(t, serverOptions{push: true})
	blocked := openPage(t, srv, notificationPermission(srv.URL, cdpbrowser.PermissionSettingDenied))
	waitPushState(blocked, "blocked")
	if got := eval[string](blocked, `document.getElementById("push-state").textContent + "|" + document.getElementById("push-btn").disabled`); got != "Blocked by the browser|true" {
		t.Errorf("blocked: %q; want Blocked by the browser, the button disabled", got)
	}
	noPush := openPage(t, srv, chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{Source: `delete window.PushManager;`})
		return err
	}))
	waitPushState(noPush, "unsupported")
	if got := eval[string](noPush, `document.getElementById("push-state").textContent`); got != "Not supported by this browser" {
		t.Errorf("no PushManager: %q; want Not supported by this browser", got)
	}
	for _, v := range runAxe(t, noPush) {
		t.Errorf("axe: %s (%s): %s %v", v.ID, v.Impact, v.Help, v.Nodes)
	}

	// Without Web Push the key request answers 404 and the control never
	// joins the page: wait for that answer (its resource timing entry),
	// then look.
	plain := openPage(t, newServer(t))
	plain.waitJS(`performance.getEntriesByName(location.origin + "/api/v1/push/key").length > 0`)
	if eval[bool](plain, `document.getElementById("push") !== null && !document.getElementById("push").hidden`) {
		t.Error("the push control shows on a server without Web Push")
	}
}

// TestPushKeyRetried: a key request that fails on the way (a proxy that
// cannot reach a restarting server answers 502) is asked again, so the
// control still shows; without the retry it would stay hidden until the
// page is reloaded.
func TestPushKeyRetried(t *testing.T) {
	turns.Parallel(t)
	srv := newServerWith(t, serverOptions{push: true})
	srv.faults.failNextKeys(2)
	p := openPage(t, srv)
	waitPushState(p, "off")
	if left := srv.faults.keysLeft(); left != 0 {
		t.Errorf("%d key requests were not made; want both failures seen", left)
	}
	if hidden := eval[bool](p, `document.getElementById("push").hidden`); hidden {
		t.Error("the push control is hidden after the key came")
	}
}

// waitPushState waits until the Web Push control shows state; on timeout
// it says what the control, the browser's permission and the key requests
// were.
func waitPushState(p *page, state string) {
	p.t.Helper()
	expr := fmt.Sprintf(`document.getElementById("push")?.dataset.state === %q`, state)
	_, err := chromedp.Run(p.ctx, chromedp.Poll[chromedp.Void](expr,
		chromedp.WithPollingInterval(40*time.Millisecond), chromedp.WithPollingTimeout(20*time.Second)))
	if err == nil {
		return
	}
	seen, _ := chromedp.Run(p.ctx, chromedp.Evaluate[string](`(() => {
		const el = document.getElementById("push");
		const control = el ? "state " + JSON.stringify(el.dataset.state ?? null) + ", hidden " + el.hidden + ", in the page " + el.isConnected : "no control";
		const keys = performance.getEntriesByName(location.origin + "/api/v1/push/key").map((e) => e.responseStatus).join(" ");
		return control + "; notifications " + (window.Notification?.permission ?? "absent") + "; key requests answered: [" + keys + "]";
	})()`))
	p.t.Fatalf("waiting for the push control to show %s: %v (%s)", state, err, seen)
}
