package deploy

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// imageUID is the user the Dockerfile runs hitl as.
const imageUID = 65532

var (
	rootfsOnce sync.Once
	rootfsDir  string
	rootfsErr  error
)

// TestMain removes the root filesystem the tests build.
func TestMain(m *testing.M) {
	code := m.Run()
	if rootfsDir != "" {
		os.RemoveAll(filepath.Dir(rootfsDir))
	}
	os.Exit(code)
}

// rootfs builds the image's files once, with build-image.sh --rootfs, and
// returns the directory that holds them (a build context's rootfs/).
func rootfs(t *testing.T) string {
	t.Helper()
	rootfsOnce.Do(func() {
		var ctx string
		if ctx, rootfsErr = os.MkdirTemp("", "hitl-image-"); rootfsErr != nil {
			return
		}
		if rootfsErr = os.Chmod(ctx, 0o755); rootfsErr != nil {
			return
		}
		rootfsDir = filepath.Join(ctx, "rootfs")
		out, err := exec.Command("./build-image.sh", "--rootfs", rootfsDir).CombinedOutput()
		if err != nil {
			rootfsErr = fmt.Errorf("build-image.sh --rootfs: %v\n%s", err, out)
		}
	})
	if rootfsErr != nil {
		t.Fatal(rootfsErr)
	}
	return rootfsDir
}

// image is what the Dockerfile says about running hitl.
type image struct {
	env         map[string]string
	user        string
	entrypoint  []string
	cmd         []string
	healthcheck []string
	volume      string
	port        string
}

// readDockerfile reads the instructions that decide how hitl runs.
func readDockerfile(t *testing.T) image {
	t.Helper()
	src, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	// Join continued lines.
	text := strings.ReplaceAll(string(src), "\\\n", " ")
	img := image{env: map[string]string{}}
	execForm := func(s string) []string {
		var v []string
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Fatalf("Dockerfile: %q is not in exec form: %v", s, err)
		}
		return v
	}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		word, rest, _ := strings.Cut(line, " ")
		rest = strings.TrimSpace(rest)
		switch word {
		case "FROM":
			if rest != "scratch" {
				t.Errorf("Dockerfile: FROM %s, want scratch", rest)
			}
		case "ENV":
			for _, kv := range strings.Fields(rest) {
				k, v, _ := strings.Cut(kv, "=")
				img.env[k] = v
			}
		case "USER":
			img.user = rest
		case "ENTRYPOINT":
			img.entrypoint = execForm(rest)
		case "CMD":
			img.cmd = execForm(rest)
		case "VOLUME":
			img.volume = execForm(rest)[0]
		case "EXPOSE":
			img.port = rest
		case "HEALTHCHECK":
			_, form, ok := strings.Cut(rest, "CMD ")
			if !ok {
				t.Fatalf("Dockerfile: HEALTHCHECK without CMD: %s", rest)
			}
			img.healthcheck = execForm(form)
		}
	}
	if img.user != fmt.Sprintf("%d:%d", imageUID, imageUID) {
		t.Errorf("Dockerfile: USER %q, want %d:%d (not root)", img.user, imageUID, imageUID)
	}
	if img.volume != "/data" || !strings.HasPrefix(img.env["HITL_DB"], "/data/") {
		t.Errorf("Dockerfile: VOLUME %q and HITL_DB %q, want the database on /data", img.volume, img.env["HITL_DB"])
	}
	if !slicesEqual(img.entrypoint, []string{"/hitl"}) || !slicesEqual(img.cmd, []string{"serve"}) ||
		!slicesEqual(img.healthcheck, []string{"/hitl", "health"}) {
		t.Errorf("Dockerfile: ENTRYPOINT %q CMD %q HEALTHCHECK %q, want /hitl serve and /hitl health", img.entrypoint, img.cmd, img.healthcheck)
	}
	_, port, _ := strings.Cut(img.env["HITL_ADDR"], ":")
	if img.port != port {
		t.Errorf("Dockerfile: EXPOSE %s, but HITL_ADDR %s", img.port, img.env["HITL_ADDR"])
	}
	return img
}

func slicesEqual(a, b []string) bool {
	return strings.Join(a, "\x00") == strings.Join(b, "\x00") && len(a) == len(b)
}

// TestImageBinaryIsStatic checks that the image's binary needs nothing an
// empty base lacks: no dynamic loader, no shared library.
func TestImageBinaryIsStatic(t *testing.T) {
	t.Parallel()
	f, err := elf.Open(filepath.Join(rootfs(t), "hitl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("the binary has a %v segment: it is not static", p.Type)
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("the binary needs %v", libs)
	}
}

// container runs the image's binary from its root filesystem as the image
// would: its ENV only (the database on data/), as its USER when this test
// runs as root.
type container struct {
	t      *testing.T
	rootfs string
	env    []string
	addr   string // where the test reaches it
}

func newContainer(t *testing.T, img image, rootfs string) *container {
	t.Helper()
	port := freePort(t)
	host, _, _ := strings.Cut(img.env["HITL_ADDR"], ":")
	c := &container{t: t, rootfs: rootfs, addr: "127.0.0.1:" + port}
	for k, v := range img.env {
		switch {
		case k == "HITL_ADDR":
			v = host + ":" + port
		case strings.HasPrefix(v, img.volume+"/"):
			v = filepath.Join(rootfs, "data", strings.TrimPrefix(v, img.volume+"/"))
		}
		c.env = append(c.env, k+"="+v)
	}
	if os.Geteuid() == 0 {
		if err := os.Chown(filepath.Join(rootfs, "data"), imageUID, imageUID); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// command is the binary run with args, as the image runs it.
func (c *container) command(args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(c.rootfs, "hitl"), args...)
	cmd.Env = c.env
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if os.Geteuid() == 0 {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: imageUID, Gid: imageUID}
	}
	return cmd
}

// serve starts the image's CMD and waits until its HEALTHCHECK passes.
func (c *container) serve(img image) *exec.Cmd {
	c.t.Helper()
	cmd := c.command(img.cmd...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { _ = cmd.Process.Kill() })
	deadline := time.Now().Add(30 * time.Second)
	for {
		if err := c.command(img.healthcheck[1:]...).Run(); err == nil {
			return cmd
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("the health check never passed; the server said:\n%s", stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stop sends SIGTERM, as docker stop does, and checks a clean exit.
func (c *container) stop(cmd *exec.Cmd) {
	c.t.Helper()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		c.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			c.t.Errorf("hitl serve after SIGTERM: %v", err)
		}
	case <-time.After(20 * time.Second):
		c.t.Fatal("hitl serve did not stop within 20 s of SIGTERM")
	}
}

// TestImageRootfsKeepsAnswersAcrossRestarts runs the image's files the way
// the image runs them: a token made on the volume, the server, a question
// asked and answered, a stop, a start on the same volume, and the answer
// still there.
func TestImageRootfsKeepsAnswersAcrossRestarts(t *testing.T) {
	t.Parallel()
	img := readDockerfile(t)
	c := newContainer(t, img, rootfs(t))
	if os.Geteuid() != 0 {
		t.Logf("not root: the binary runs as %d, not as the image's user %d", os.Geteuid(), imageUID)
	}

	out, err := c.command("version").Output()
	if err != nil || !strings.Contains(string(out), "commit  ") || strings.Contains(string(out), "commit  unknown") {
		t.Errorf("hitl version: %v\n%s\nwant the commit stamped by build-image.sh", err, out)
	}
	token := makeToken(t, c)
	srv := c.serve(img)
	id := ask(t, c.addr, token)
	answer(t, c.addr, token, id)
	c.stop(srv)

	srv = c.serve(img)
	if got := status(t, c.addr, token, id); got != "answered true" {
		t.Errorf("after a restart on the same volume: %s, want answered true", got)
	}
	c.stop(srv)
}

// makeToken makes an admin API token on the volume, as "docker run … token
// create" does.
func makeToken(t *testing.T, c *container) string {
	t.Helper()
	cmd := c.command("token", "create", "--name", "admin", "--role", "admin")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("token create: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// freePort returns a TCP port nothing listens on.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// call sends one API request with the token and decodes the reply.
func call(t *testing.T, method, url, token, body string) map[string]any {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		t.Fatalf("%s %s: %s %s", method, url, resp.Status, raw)
	}
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	return v
}

func ask(t *testing.T, addr, token string) string {
	t.Helper()
	v := call(t, http.MethodPost, "http://"+addr+"/api/v1/interactions", token, `{"interaction_type":"approval","question":"Deploy build 1432?"}`)
	id, _ := v["interaction_id"].(string)
	if id == "" {
		t.Fatalf("ask: no interaction_id in %v", v)
	}
	return id
}

func answer(t *testing.T, addr, token, id string) {
	t.Helper()
	call(t, http.MethodPost, "http://"+addr+"/api/v1/interactions/"+id+"/respond", token, `{"value":"approve"}`)
}

// status is the interaction's status and value, as "answered true".
func status(t *testing.T, addr, token, id string) string {
	t.Helper()
	v := call(t, http.MethodGet, "http://"+addr+"/api/v1/interactions/"+id, token, "")
	result, _ := v["result"].(map[string]any)
	return fmt.Sprintf("%v %v", v["status"], result["value"])
}
