package ui_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/hitl-sh/hitl/internal/turns"
)

// TestDetailDeliveries: an admin sees the question's webhook deliveries
// in its detail view: a callback_url delivered, and a subscription whose
// receiver fails, waiting to retry with its last status.
func TestDetailDeliveries(t *testing.T) {
	turns.Parallel(t)
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(ok.Close)
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) }))
	t.Cleanup(down.Close)
	srv := newServerWith(t, serverOptions{webhooks: true})
	if code, data := srv.call(t, http.MethodPost, "/api/v1/webhooks", map[string]any{"url": down.URL + "/hook", "events": []string{"interaction.cancelled"}}); code != http.StatusCreated {
		t.Fatalf("POST /api/v1/webhooks: %d %s", code, data)
	}
	const question = "Rotate the database credentials?"
	id := srv.ask(t, map[string]any{"question": question, "callback_url": ok.URL + "/done"})
	if code, data := srv.call(t, http.MethodPost, "/api/v1/interactions/"+id+"/cancel", map[string]any{}); code != http.StatusOK {
		t.Fatalf("cancel: %d %s", code, data)
	}
	// Both deliveries have been tried once.
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, data := srv.call(t, http.MethodGet, "/api/v1/interactions/"+id+"/deliveries", nil)
		var r struct {
			Deliveries []struct {
				History []json.RawMessage `json:"history"`
			} `json:"deliveries"`
		}
		json.Unmarshal(data, &r)
		if len(r.Deliveries) == 2 && len(r.Deliveries[0].History) > 0 && len(r.Deliveries[1].History) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("deliveries not tried: %s", data)
		}
		time.Sleep(50 * time.Millisecond)
	}

	p := openPage(t, srv, chromedp.EmulateViewport(1100, 900))
	p.openDetail(id, question)
	p.waitJS(`document.querySelectorAll(".detail-deliveries tbody tr").length === 2`)
	type row struct{ URL, State, Attempts, Last, Next, Delivered string }
	rows := eval[[]row](p, `[...document.querySelectorAll(".detail-deliveries tbody tr")].map(tr => {
		const c = tr.querySelectorAll("td");
		return {URL: c[0].querySelector(".mono").textContent, State: c[2].textContent, Attempts: c[3].textContent, Last: c[4].textContent, Next: c[5].textContent, Delivered: c[6].textContent};
	})`)
	byURL := map[string]row{}
	for _, r := range rows {
		byURL[r.URL] = r
	}
	good, bad := byURL[ok.URL+"/done"], byURL[down.URL+"/hook"]
	if good.State != "Delivered" || good.Attempts != "1" || good.Delivered == "—" || good.Next != "—" || !strings.HasPrefix(good.Last, "204") {
		t.Errorf("the callback_url's row = %+v; want delivered once, with its time", good)
	}
	if bad.State != "Waiting to retry" || bad.Attempts != "1" || !strings.HasPrefix(bad.Last, "503") || bad.Next == "—" || bad.Delivered != "—" {
		t.Errorf("the failing subscription's row = %+v; want waiting to retry after a 503, with the next retry's time", bad)
	}
	for _, v := range runAxe(t, p) {
		t.Errorf("axe: %s (%s): %s %v", v.ID, v.Impact, v.Help, v.Nodes)
	}
}
