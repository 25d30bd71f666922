package bench

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Server is a hitl server under test.
type Server struct {
	// URL is the server's base URL, on loopback.
	URL string
	// PID is the server's process, whose memory is measured; 0 when it is
	// not known (a server the benchmark did not start).
	PID int
	// Stop stops the server; nil when the benchmark does not own it.
	Stop func() error
	// Token is the API token every request carries; "" sends none (the
	// server is in local mode).
	Token string
	// Startup is how long the server took from being started to its
	// /readyz answering 200; 0 when the benchmark did not start it.
	Startup time.Duration
}

// authHeader is the Authorization header line (CRLF included) for s's
// token, or "".
func (s *Server) authHeader() string {
	if s.Token == "" {
		return ""
	}
	return "Authorization: Bearer " + s.Token + "\r\n"
}

// Existing returns a Launch function that hands every phase the running
// server at rawURL, which must be on loopback, with token ("" for none)
// on every request.
func Existing(rawURL, token string) (func(ctx context.Context, phase string) (*Server, error), error) {
	if err := CheckLoopback(rawURL); err != nil {
		return nil, err
	}
	base := strings.TrimRight(rawURL, "/")
	return func(ctx context.Context, phase string) (*Server, error) {
		if err := ready(ctx, base, nil); err != nil {
			return nil, err
		}
		return &Server{URL: base, Token: token}, nil
	}, nil
}

// CheckLoopback refuses a URL that is not http:// on a loopback address:
// the benchmark generates heavy load and must not aim it at other machines.
func CheckLoopback(rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return fmt.Errorf("server URL: %w", err)
	}
	if u.Scheme != "http" {
		return fmt.Errorf("server URL %q: only http:// on loopback is supported", rawURL)
	}
	host := u.Hostname()
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("server URL %q is not on loopback; the benchmark only targets 127.0.0.1, ::1 or localhost", rawURL)
	}
	return nil
}

// Child starts each phase's server as a child process, so that its memory
// is its own: Exe serve --addr 127.0.0.1:PORT --db DB(phase) --log-level
// LogLevel, with its log written to Dir/PHASE.log.
type Child struct {
	Exe      string                    // the hitl binary
	Dir      string                    // for logs (and, by the caller's DB, databases)
	DB       func(phase string) string // the --db of a phase
	LogLevel string                    // "" means the server's default
	Env      []string                  // extra KEY=VALUE environment, such as GOMEMLIMIT
	// Auth runs each server with authentication on: an admin API token is
	// created in the phase's database first (Exe token create), every
	// request carries it, the answer limit is lifted (--answer-rate 0) and
	// the token is revoked once the server has stopped.
	Auth bool
}

// Launch starts the server for phase and waits until it is ready.
func (c *Child) Launch(ctx context.Context, phase string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	db := c.DB(phase)
	args := []string{"serve", "--addr", addr, "--db", db}
	if c.LogLevel != "" {
		args = append(args, "--log-level", c.LogLevel)
	}
	var token string
	revoke := func() error { return nil }
	if c.Auth {
		if token, revoke, err = c.createToken(ctx, db, phase); err != nil {
			return nil, err
		}
		args = append(args, "--answer-rate", "0")
	}
	logPath := filepath.Join(c.Dir, phase+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("start server: %w", err), revoke())
	}
	cmd := exec.Command(c.Exe, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = append(append(os.Environ(), "HITL_ADDR=", "HITL_DB="), c.Env...)
	started := time.Now()
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, errors.Join(fmt.Errorf("start server: %w", err), revoke())
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		logFile.Close()
		close(exited)
	}()
	halt := func() error {
		select {
		case <-exited:
			return nil
		default:
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
			return nil
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
			return errors.New("server did not stop within 20s of SIGTERM; killed")
		}
	}
	stop := func() error { return errors.Join(halt(), revoke()) }
	base := "http://" + addr
	if err := ready(ctx, base, exited); err != nil {
		_ = stop()
		return nil, fmt.Errorf("start server: %w; log:\n%s", err, tail(logPath, 2000))
	}
	return &Server{URL: base, PID: cmd.Process.Pid, Stop: stop, Token: token, Startup: time.Since(started)}, nil
}

// createToken creates an admin API token for phase in the database db and
// returns its secret, and a function that revokes it.
func (c *Child) createToken(ctx context.Context, db, phase string) (string, func() error, error) {
	var id [6]byte
	_, _ = rand.Read(id[:])
	name := fmt.Sprintf("hitl-bench-%s-%x", phase, id)
	hitl := func(ctx context.Context, args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, c.Exe, args...)
		cmd.Env = append(os.Environ(), "HITL_DB=")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("hitl %s: %w: %s", args[0]+" "+args[1], err, bytes.TrimSpace(stderr.Bytes()))
		}
		return strings.TrimSpace(stdout.String()), nil
	}
	secret, err := hitl(ctx, "token", "create", "--name", name, "--role", "admin", "--db", db)
	if err != nil {
		return "", nil, fmt.Errorf("create the benchmark's token: %w", err)
	}
	revoke := func() error {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if _, err := hitl(ctx, "token", "revoke", "--db", db, name); err != nil {
			return fmt.Errorf("revoke the benchmark's token: %w", err)
		}
		return nil
	}
	return secret, revoke, nil
}

// Purge runs "hitl purge --older-than AGE" on phase's database, as an
// operator would while the server runs.
func (c *Child) Purge(ctx context.Context, phase string, olderThan time.Duration) error {
	cmd := exec.CommandContext(ctx, c.Exe, "purge", "--older-than", olderThan.String(), "--db", c.DB(phase))
	cmd.Env = append(os.Environ(), "HITL_DB=")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("hitl purge: %w: %s", err, bytes.TrimSpace(out))
	}
	return nil
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// ready polls base/readyz every 5 ms until it answers 200, for up to
// 30 s, or until exited is closed.
func ready(ctx context.Context, base string, exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	hc := &http.Client{Timeout: 2 * time.Second}
	defer hc.CloseIdleConnections()
	var last error
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/readyz", nil)
		resp, err := hc.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("GET /readyz: %s", resp.Status)
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("server at %s not ready: %w", base, last)
		case <-exited:
			return errors.New("server exited")
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// tail returns the last n bytes of the file at path.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// rssMiB returns the resident set size of process pid in MiB, from
// /proc/PID/status (VmRSS).
func rssMiB(pid int) (float64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, fmt.Errorf("read memory of process %d: %w", pid, err)
	}
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(line, []byte("VmRSS:")); ok {
			f := strings.Fields(string(v)) // "123456 kB"
			if len(f) == 2 && f[1] == "kB" {
				kb, err := strconv.ParseFloat(f[0], 64)
				if err == nil {
					return kb / 1024, nil
				}
			}
		}
	}
	return 0, fmt.Errorf("read memory of process %d: no VmRSS in /proc/%d/status", pid, pid)
}

// clockTick is the unit of the CPU times in /proc/PID/stat (USER_HZ,
// 100 on every Linux platform Go supports).
const clockTick = 10 * time.Millisecond

// serverCPU returns the CPU time srv's process has used; 0 when it is
// not a child (--server) or cannot be read.
func serverCPU(srv *Server) time.Duration {
	if srv.PID == 0 {
		return 0
	}
	cpu, _ := processCPU(srv.PID)
	return cpu
}

// processCPU returns the user and system CPU time process pid has used,
// from /proc/PID/stat.
func processCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name, in parentheses, may hold spaces: fields count
	// from the last ')'. utime and stime are fields 14 and 15.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("malformed /proc/PID/stat")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, errors.New("malformed /proc/PID/stat")
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, errors.New("malformed /proc/PID/stat")
	}
	return time.Duration(utime+stime) * clockTick, nil
}

// machineBusy returns the CPU time all processes have used (user, nice,
// system, irq, softirq, steal), from /proc/stat.
func machineBusy() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := strings.Fields(string(line)) // cpu user nice system idle iowait irq softirq steal …
	if len(f) < 9 || f[0] != "cpu" {
		return 0
	}
	var busy int64
	for _, i := range []int{1, 2, 3, 6, 7, 8} {
		v, _ := strconv.ParseInt(f[i], 10, 64)
		busy += v
	}
	return time.Duration(busy) * clockTick
}

// loadAverage returns the 1-minute load average, or -1 when unknown.
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return -1
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return -1
	}
	return v
}
