package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// defaultSettle is how long the server is left idle before its memory is
// read, so a burst's garbage is collected.
const defaultSettle = 2 * time.Second

// streamsResult is the memory and fan-out of a server with many open
// long-polls and WebSocket subscribers.
type streamsResult struct {
	Questions   int     // pending questions the waiters wait on
	Waiters     int     // open long-polls
	Subscribers int     // open WebSockets
	BaseMiB     float64 // with the questions only
	WaitersMiB  float64 // with the long-polls open
	MiB         float64 // with the long-polls and the WebSockets open
	Trials      []dist  // per trial: create sent → question on each subscriber
	Lost        int     // long-polls not woken when their question was answered
}

// streamQuestions is how many pending questions the long-polls share.
// Every WebSocket replays every pending question on connect, so with one
// question per waiter 10,000 subscribers would be sent 100 million replays;
// the waiters share a few questions instead (what a wait costs is its
// connection, not its question).
const streamQuestions = 20

// maxLeftPending is how many pending questions the streams phase accepts
// in the database before it starts.
const maxLeftPending = 1000

// streams opens waiters long-polls and subscribers WebSockets on a fresh
// server, reads its memory, times trials fan-outs of a new question to
// every subscriber, then answers the questions and checks that every
// long-poll returns.
func streams(ctx context.Context, srv *Server, waiters, subscribers, trials int, settle time.Duration, cleanup bool, progress func(string, ...any)) (streamsResult, error) {
	res := streamsResult{Questions: streamQuestions, Waiters: waiters, Subscribers: subscribers}
	a := newAPI(srv, 8)
	defer a.close()
	u, err := url.Parse(srv.URL)
	if err != nil {
		return res, err
	}
	tag := fmt.Sprintf("streams-%d", time.Now().UnixNano())
	var created []string
	defer func() {
		if cleanup {
			cancelAll(context.WithoutCancel(ctx), a, created)
		}
	}()
	// Every WebSocket replays every pending question: with thousands left
	// over in a shared database the phase would send millions.
	if many, err := a.pendingAtLeast(ctx, maxLeftPending); err != nil {
		return res, fmt.Errorf("streams: %w", err)
	} else if many {
		return res, fmt.Errorf("streams: the database has %d or more pending questions, which every WebSocket would replay; use a fresh database or cancel them", maxLeftPending)
	}
	questions := make([]string, streamQuestions)
	for i := range questions {
		if questions[i], err = a.create(ctx, tag, i); err != nil {
			return res, fmt.Errorf("streams: %w", err)
		}
		created = append(created, questions[i])
	}
	if res.BaseMiB, err = settledRSS(srv, settle); err != nil {
		return res, err
	}

	progress("streams: opening %d long-polls", waiters)
	polls := make([]net.Conn, waiters)
	defer closeAll(polls)
	if err := openLongPolls(ctx, srv, u, questions, polls); err != nil {
		return res, fmt.Errorf("streams: open long-polls: %w", err)
	}
	if res.WaitersMiB, err = settledRSS(srv, settle); err != nil {
		return res, err
	}

	progress("streams: opening %d WebSockets", subscribers)
	fan := newFanout(subscribers, trials)
	subs := make([]*wsConn, subscribers)
	defer fan.close(subs)
	if err := openSubscribers(ctx, []*Server{srv}, fan, tag, waiters, subs); err != nil {
		return res, fmt.Errorf("streams: %w", err)
	}
	if res.MiB, err = settledRSS(srv, settle); err != nil {
		return res, err
	}

	for t := range trials {
		progress("streams: fan-out %d/%d to %d subscribers", t+1, trials, subscribers)
		id, lat, err := fanOutOnce(ctx, a, fan, tag, t)
		if id != "" {
			created = append(created, id)
		}
		if err != nil {
			return res, fmt.Errorf("streams: fan-out: %w", err)
		}
		res.Trials = append(res.Trials, summarize(lat))
		time.Sleep(100 * time.Millisecond)
	}

	progress("streams: answering %d questions to wake %d long-polls", len(questions), waiters)
	if res.Lost, err = wakeLongPolls(ctx, a, questions, polls); err != nil {
		return res, fmt.Errorf("streams: %w", err)
	}
	return res, nil
}

// openLongPolls opens len(polls) long-polls on questions, in turn: a raw
// request each, read only at the end (wakeLongPolls).
func openLongPolls(ctx context.Context, srv *Server, u *url.URL, questions []string, polls []net.Conn) error {
	return parallel(ctx, len(polls), 64, func(i int) error {
		c, err := dialTCP(ctx, u.Host, localAddr(i))
		if err != nil {
			return err
		}
		polls[i] = c
		req := "GET " + u.Path + "/api/v1/interactions/" + questions[i%len(questions)] + "/wait?timeout=300 HTTP/1.1\r\nHost: " + u.Host + "\r\n" +
			srv.authHeader() + "\r\n"
		_, err = io.WriteString(c, req)
		return err
	})
}

// openSubscribers opens len(subs) WebSockets, spread over srvs in turn,
// each read in its own goroutine, and waits until every one has the replay
// of the pending questions. Their local addresses follow the first skip
// long-polls'.
func openSubscribers(ctx context.Context, srvs []*Server, fan *fanout, tag string, skip int, subs []*wsConn) error {
	err := parallel(ctx, len(subs), 64, func(i int) error {
		ws, err := dialWS(ctx, srvs[i%len(srvs)], localAddr(skip+i))
		if err != nil {
			return err
		}
		subs[i] = ws
		fan.readers.Go(func() { fan.read(ws, i, tag) })
		return nil
	})
	if err != nil {
		return fmt.Errorf("open websockets: %w", err)
	}
	return fan.awaitReady(ctx, 2*time.Minute)
}

// fanOutOnce is fan-out trial t: one new question, timed to every
// subscriber. It returns the question's id once created.
func fanOutOnce(ctx context.Context, a *api, fan *fanout, tag string, t int) (string, []time.Duration, error) {
	fan.begin(t, time.Now())
	id, err := a.create(ctx, tag+"-fanout", t)
	if err != nil {
		return "", nil, err
	}
	lat, err := fan.await(ctx, t, arrivalBound)
	return id, lat, err
}

// wakeLongPolls answers the questions and counts the long-polls that do
// not return answered within lostBound.
func wakeLongPolls(ctx context.Context, a *api, questions []string, polls []net.Conn) (int, error) {
	for _, id := range questions {
		if err := a.respond(ctx, id); err != nil {
			return 0, err
		}
	}
	deadline := time.Now().Add(lostBound)
	var lost atomic.Int64
	_ = parallel(ctx, len(polls), 64, func(i int) error {
		if !answeredResponse(polls[i], deadline) {
			lost.Add(1)
		}
		return nil
	})
	return int(lost.Load()), nil
}

// settledRSS reads the server's memory after it has been idle a moment,
// or 0 when its process is not known.
func settledRSS(srv *Server, settle time.Duration) (float64, error) {
	if srv.PID == 0 {
		return 0, nil
	}
	time.Sleep(settle)
	return rssMiB(srv.PID)
}

// localAddr spreads connections over loopback source addresses
// 127.0.0.2–127.0.0.9, so tens of thousands of them do not run out of
// ephemeral ports.
func localAddr(i int) net.Addr {
	return &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(2+i%8))}
}

// parallel runs fn(0) … fn(n-1) on up to workers goroutines and returns
// the first error.
func parallel(ctx context.Context, n, workers int, fn func(i int) error) error {
	var (
		next  atomic.Int64
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for range min(workers, n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := fn(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
						next.Store(int64(n)) // stop handing out work
					}
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return first
}

// closeAll closes every non-nil connection.
func closeAll(conns []net.Conn) {
	for _, c := range conns {
		if c != nil {
			c.Close()
		}
	}
}

// answeredResponse reads one HTTP response from c until deadline and
// reports whether it is a 200 with an answered interaction.
func answeredResponse(c net.Conn, deadline time.Time) bool {
	if c == nil {
		return false
	}
	_ = c.SetReadDeadline(deadline)
	br := bufio.NewReaderSize(c, 2048)
	status, err := br.ReadString('\n')
	if err != nil || !bytes.Contains([]byte(status), []byte(" 200 ")) {
		return false
	}
	length := -1
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return false
		}
		if line == "\r\n" {
			break
		}
		if k, v, ok := bytes.Cut([]byte(line), []byte(":")); ok && bytes.EqualFold(bytes.TrimSpace(k), []byte("Content-Length")) {
			length, _ = strconv.Atoi(string(bytes.TrimSpace(v)))
		}
	}
	var body []byte
	if length >= 0 {
		body = make([]byte, length)
		if _, err := io.ReadFull(br, body); err != nil {
			return false
		}
	} else {
		body, _ = io.ReadAll(io.LimitReader(br, 1<<20)) // chunked: read what came
	}
	return bytes.Contains(body, []byte(`"status":"answered"`))
}
