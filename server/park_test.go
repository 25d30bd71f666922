package server_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/internal/turns"
	"github.com/hitl-sh/hitl/server"
)

// waitUntil waits until cond holds (hitltest.WaitFor).
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	hitltest.WaitFor(t, what, cond)
}

// getOn sends GET path on client and reports the response and whether the
// connection was a reused one.
func getOn(t *testing.T, client *http.Client, url string) (*http.Response, []byte, bool) {
	t.Helper()
	var reused bool
	trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused }}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(testContext(t, streamTimeout), trace), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s: %v", url, err)
	}
	return resp, body, reused
}

func TestParkedWaitAnsweredKeepsTheConnection(t *testing.T) {
	turns.Parallel(t)
	ts := newParkingServer(t)
	in := ts.create(t, map[string]any{"question": "Ship it?", "type": "approval"})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	t.Cleanup(client.CloseIdleConnections)
	// A first request opens the connection the wait then reuses.
	getOn(t, client, ts.URL+"/healthz")

	type result struct {
		resp   *http.Response
		body   []byte
		reused bool
	}
	done := make(chan result, 1)
	go func() {
		resp, body, reused := getOn(t, client, ts.URL+"/api/v1/interactions/"+in.ID+"/wait?timeout=60")
		done <- result{resp, body, reused}
	}()
	hitltest.Await(t, "the wait to be parked", ts.Broker.WaitStarted(in.ID))
	ts.mustDo(t, "POST", "/api/v1/interactions/"+in.ID+"/respond", map[string]any{"value": true}, http.StatusOK, nil)
	r := <-done

	if r.resp.StatusCode != http.StatusOK {
		t.Fatalf("wait: status %d: %s", r.resp.StatusCode, r.body)
	}
	var got hitl.Interaction
	if err := json.Unmarshal(r.body, &got); err != nil || got.Status != hitl.StatusAnswered {
		t.Fatalf("wait returned %s (%v), want the answered interaction", r.body, err)
	}
	for key, want := range map[string]string{"Content-Type": "application/json", "Cache-Control": "no-store"} {
		if got := r.resp.Header.Get(key); got != want {
			t.Errorf("%s: %q, want %q", key, got, want)
		}
	}
	if r.resp.Close || r.resp.Header.Get("Date") == "" {
		t.Errorf("response closes the connection (%v) or has no Date (%q)", r.resp.Close, r.resp.Header.Get("Date"))
	}
	// The connection went back to the server: the next request on it is
	// served.
	resp, body, reused := getOn(t, client, ts.URL+"/api/v1/interactions/"+in.ID)
	if !r.reused || !reused || resp.StatusCode != http.StatusOK {
		t.Errorf("wait on a reused connection %v; next request reused %v, status %d: %s", r.reused, reused, resp.StatusCode, body)
	}
}

// newParkingServer is newTestServer with every long-poll parked, none
// held in its handler first (as hitl serve holds the first few hundred),
// with also's settings.
func newParkingServer(t *testing.T, also ...func(*server.Server)) *testServer {
	t.Helper()
	return newTestServerWith(t, &hitltest.Options{Prepare: func(s *server.Server) {
		server.SetHeldWaits(s, 0)
		for _, f := range also {
			f(s)
		}
	}})
}

// serveParked serves srv on a loopback port through srv.Listener, as hitl
// serve does, with every long-poll parked. Its responses are checked
// against the OpenAPI document (hitltest.ValidateResponses).
func serveParked(t *testing.T, srv *server.Server) *httptest.Server {
	t.Helper()
	server.SetHeldWaits(srv, 0)
	hs := httptest.NewUnstartedServer(hitltest.ValidateResponses(t, srv.Handler()))
	hs.Listener = srv.Listener(hs.Listener)
	hs.Start()
	return hs
}

// TestParkedWaitSameAsBlocking checks that a parked wait's response is the
// one an ordinary handler writes: same status, headers and body.
func TestParkedWaitSameAsBlocking(t *testing.T) {
	turns.Parallel(t)
	b := hitltest.StartBroker(t)
	parked := serveParked(t, server.New(b, nil))
	plain := httptest.NewServer(server.New(b, nil).Handler())
	t.Cleanup(parked.Close)
	t.Cleanup(plain.Close)
	ts := &testServer{Server: parked, Broker: b}
	in := ts.create(t, map[string]any{"question": "Which <region>?", "type": "text"})

	// Both time out on the pending interaction.
	respP, bodyP, _ := getOn(t, parked.Client(), parked.URL+"/api/v1/interactions/"+in.ID+"/wait?timeout=0.05")
	respB, bodyB, _ := getOn(t, plain.Client(), plain.URL+"/api/v1/interactions/"+in.ID+"/wait?timeout=0.05")
	if respP.StatusCode != respB.StatusCode || string(bodyP) != string(bodyB) {
		t.Errorf("parked: %d %s\nblocking: %d %s", respP.StatusCode, bodyP, respB.StatusCode, bodyB)
	}
	if !strings.Contains(string(bodyP), `"status":"pending"`) {
		t.Errorf("timed-out wait: %s, want the pending interaction", bodyP)
	}
	keys := func(h http.Header) []string {
		var ks []string
		for k := range h {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		return ks
	}
	if kp, kb := keys(respP.Header), keys(respB.Header); !slices.Equal(kp, kb) {
		t.Errorf("parked headers %v, blocking %v", kp, kb)
	}
	for _, k := range keys(respB.Header) {
		if k != "Date" && respP.Header.Get(k) != respB.Header.Get(k) {
			t.Errorf("%s: parked %q, blocking %q", k, respP.Header.Get(k), respB.Header.Get(k))
		}
	}
}

// rawConn is a plain TCP client for requests net/http's client does not
// send (pipelining, Connection: close).
func rawConn(t *testing.T, ts *testServer) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(streamTimeout))
	return c, bufio.NewReader(c)
}

func TestParkedWaitConnectionClose(t *testing.T) {
	turns.Parallel(t)
	ts := newParkingServer(t)
	in := ts.create(t, map[string]any{"question": "Close after?"})
	c, br := rawConn(t, ts)
	host := strings.TrimPrefix(ts.URL, "http://")
	if _, err := io.WriteString(c, "GET /api/v1/interactions/"+in.ID+"/wait?timeout=0.05 HTTP/1.1\r\nHost: "+host+"\r\nConnection: close\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !resp.Close || !strings.Contains(string(body), in.ID) {
		t.Fatalf("status %d, close %v: %s", resp.StatusCode, resp.Close, body)
	}
	if n, err := br.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("after the response: read %d, %v; want EOF (connection closed)", n, err)
	}
}

// TestParkedWaitPipelined sends a second request behind the wait on the
// same connection: it is served once the wait is answered.
func TestParkedWaitPipelined(t *testing.T) {
	turns.Parallel(t)
	ts := newParkingServer(t)
	in := ts.create(t, map[string]any{"question": "Pipelined?"})
	c, br := rawConn(t, ts)
	host := strings.TrimPrefix(ts.URL, "http://")
	req := "GET /api/v1/interactions/" + in.ID + "/wait?timeout=60 HTTP/1.1\r\nHost: " + host + "\r\n\r\n" +
		"GET /api/v1/interactions/" + in.ID + " HTTP/1.1\r\nHost: " + host + "\r\n\r\n"
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	hitltest.Await(t, "the wait to be parked", ts.Broker.WaitStarted(in.ID))
	ts.mustDo(t, "POST", "/api/v1/interactions/"+in.ID+"/cancel", nil, http.StatusOK, nil)
	for i, want := range []string{`"status":"cancelled"`, `"status":"cancelled"`} {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("response %d: %v", i+1, err)
		}
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
			t.Fatalf("response %d: status %d: %s", i+1, resp.StatusCode, body)
		}
	}
}

func TestParkedWaitsAnsweredAtShutdown(t *testing.T) {
	turns.Parallel(t)
	ts := newParkingServer(t)
	b, srv := ts.Broker, ts.API
	in := ts.create(t, map[string]any{"question": "Still there at shutdown?"})

	const n = 20
	type result struct {
		status int
		body   string
		close  bool
	}
	done := make(chan result, n)
	for range n {
		go func() {
			resp, body, _ := getOn(t, ts.Client(), ts.URL+"/api/v1/interactions/"+in.ID+"/wait?timeout=120")
			done <- result{resp.StatusCode, string(body), resp.Close}
		}()
	}
	waitUntil(t, "every wait to be parked", func() bool {
		// One shared entry; count the parked connections instead.
		return ts.Broker.Waiting() == 1 && parkedCount(t, ts) == n
	})
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Shutdown(testContext(t, streamTimeout)); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	for range n {
		r := <-done
		if r.status != http.StatusOK || !strings.Contains(r.body, `"status":"pending"`) || !r.close {
			t.Errorf("at shutdown: status %d, close %v: %s; want the pending interaction and the connection closed", r.status, r.close, r.body)
		}
	}
}

// parkedCount reads how many long-polls are parked from /metrics.
func parkedCount(t *testing.T, ts *testServer) int {
	t.Helper()
	return waitsGauge(t, ts, "hitl_waits_parked")
}

// waitsGauge reads the gauge name from /metrics.
func waitsGauge(t *testing.T, ts *testServer, name string) int {
	t.Helper()
	_, body := ts.do(t, "GET", "/metrics", nil)
	for line := range strings.Lines(string(body)) {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			var n int
			if err := json.Unmarshal([]byte(strings.TrimSpace(v)), &n); err != nil {
				t.Fatalf("%s %q: %v", name, v, err)
			}
			return n
		}
	}
	t.Fatalf("no %s in /metrics:\n%s", name, body)
	return 0
}

// TestWaitsHeldThenParked: the first long-polls wait in their handlers,
// those beyond the limit are parked, and every one gets its answer; a wait
// that comes once the held ones are done is held again.
func TestWaitsHeldThenParked(t *testing.T) {
	turns.Parallel(t)
	const held, n = 2, 5
	ts := newTestServerWith(t, &hitltest.Options{Prepare: func(s *server.Server) { server.SetHeldWaits(s, held) }})
	ids := make([]string, n)
	done := make(chan string, n)
	for i := range ids {
		in := ts.create(t, map[string]any{"question": fmt.Sprintf("Number %d?", i), "type": "text"})
		ids[i] = in.ID
		go func() {
			_, body, _ := getOn(t, ts.Client(), ts.URL+"/api/v1/interactions/"+in.ID+"/wait?timeout=120")
			done <- string(body)
		}()
		hitltest.Await(t, "the wait to start", ts.Broker.WaitStarted(in.ID))
	}
	waitUntil(t, "two waits held and three parked", func() bool {
		return waitsGauge(t, ts, "hitl_waits_held") == held && parkedCount(t, ts) == n-held
	})
	for i, id := range ids {
		ts.mustDo(t, "POST", "/api/v1/interactions/"+id+"/respond", map[string]any{"value": fmt.Sprintf("answer %d", i)}, http.StatusOK, nil)
	}
	got := map[string]bool{}
	for range n {
		var in hitl.Interaction
		if body := <-done; json.Unmarshal([]byte(body), &in) != nil || in.Status != hitl.StatusAnswered {
			t.Fatalf("a wait returned %s, want its answered interaction", body)
		}
		var v string
		_ = json.Unmarshal(in.Result.Value, &v)
		got[in.ID+" "+v] = true
	}
	for i, id := range ids {
		if !got[fmt.Sprintf("%s answer %d", id, i)] {
			t.Errorf("no wait returned %s with answer %d: %v", id, i, got)
		}
	}
	waitUntil(t, "no wait held or parked", func() bool {
		return waitsGauge(t, ts, "hitl_waits_held") == 0 && parkedCount(t, ts) == 0
	})
	in := ts.create(t, map[string]any{"question": "Held again?"})
	go func() {
		_, body, _ := getOn(t, ts.Client(), ts.URL+"/api/v1/interactions/"+in.ID+"/wait?timeout=120")
		done <- string(body)
	}()
	hitltest.Await(t, "the wait to start", ts.Broker.WaitStarted(in.ID))
	waitUntil(t, "the wait held", func() bool { return waitsGauge(t, ts, "hitl_waits_held") == 1 })
	if p := parkedCount(t, ts); p != 0 {
		t.Errorf("%d parked, want the wait held", p)
	}
	ts.mustDo(t, "POST", "/api/v1/interactions/"+in.ID+"/cancel", nil, http.StatusOK, nil)
	if body := <-done; !strings.Contains(body, `"status":"cancelled"`) {
		t.Errorf("the held wait returned %s, want the cancelled interaction", body)
	}
}

// TestHeadWaitIsNotParked: a HEAD on the wait route (the router serves
// GET routes for HEAD too) waits the ordinary way, so its response has no
// body and the connection stays in step.
func TestHeadWaitIsNotParked(t *testing.T) {
	turns.Parallel(t)
	ts := newParkingServer(t)
	in := ts.create(t, map[string]any{"question": "Head?"})
	req, err := http.NewRequest(http.MethodHead, ts.URL+"/api/v1/interactions/"+in.ID+"/wait?timeout=0.05", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("HEAD wait: status %d", resp.StatusCode)
	}
	// The same connection serves the next request correctly.
	r2, body, reused := getOn(t, ts.Client(), ts.URL+"/healthz")
	if r2.StatusCode != http.StatusOK || !reused || !strings.Contains(string(body), `"ok"`) {
		t.Errorf("after HEAD: status %d, reused %v: %s", r2.StatusCode, reused, body)
	}
}

// TestWaitAgentHangsUp: an agent that closes its connection while it
// waits ends its wait long before the wait's timeout (at once when the
// wait is held in its handler, by the sweep when it is parked), nothing is
// logged as an error, and the interaction can still be answered.
func TestWaitAgentHangsUp(t *testing.T) {
	turns.Idle(t) // the subtests take the turns
	for _, tc := range []struct {
		name, gauge string
		held        int // long-polls held before they are parked
	}{
		{"parked", "hitl_waits_parked", 0},
		{"held", "hitl_waits_held", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			turns.Parallel(t)
			logs := &syncBuffer{}
			ts := newTestServerWith(t, &hitltest.Options{
				Server: &server.Options{Logger: slog.New(slog.NewTextHandler(logs, nil))},
				Prepare: func(s *server.Server) {
					server.SetHeldWaits(s, tc.held)
					server.SetParkSweep(s, 20*time.Millisecond)
				},
			})
			b := ts.Broker
			in := ts.create(t, map[string]any{"question": "Anyone there?"})

			c, _ := rawConn(t, ts)
			host := strings.TrimPrefix(ts.URL, "http://")
			if _, err := io.WriteString(c, "GET /api/v1/interactions/"+in.ID+"/wait?timeout=300 HTTP/1.1\r\nHost: "+host+"\r\n\r\n"); err != nil {
				t.Fatal(err)
			}
			waitUntil(t, "the wait to be "+tc.name, func() bool { return waitsGauge(t, ts, tc.gauge) == 1 })
			c.Close()
			waitUntil(t, "the hung-up wait to end", func() bool { return waitsGauge(t, ts, tc.gauge) == 0 && b.Waiting() == 0 })
			if strings.Contains(logs.String(), "level=ERROR") {
				t.Errorf("an agent hanging up was logged as an error:\n%s", logs)
			}
			// The interaction is untouched and can still be answered.
			ts.mustDo(t, "POST", "/api/v1/interactions/"+in.ID+"/respond", map[string]any{"value": "yes"}, http.StatusOK, nil)
		})
	}
}
