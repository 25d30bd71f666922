package deploy

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// podman is a way to run podman on this machine: extra global flags and
// environment.
type podman struct {
	bin    string
	global []string
	env    []string
	name   string // how the test log names it
}

// run runs podman with args and returns its combined output.
func (p podman) run(args ...string) (string, error) {
	cmd := exec.Command(p.bin, append(slicesClone(p.global), args...)...)
	cmd.Env = append(os.Environ(), p.env...)
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// stdout runs podman with args and returns its standard output alone.
func (p podman) stdout(args ...string) (string, error) {
	cmd := exec.Command(p.bin, append(slicesClone(p.global), args...)...)
	cmd.Env = append(os.Environ(), p.env...)
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }

// podmanThatRuns returns the first way of running podman under which a
// container runs here; it skips the test, with each way's error, when
// none does. Some hosts refuse crun's default RLIMIT_NOFILE and its
// cgroups handling: runc with cgroupfs and no default ulimits runs there.
func podmanThatRuns(t *testing.T, bin, image string) podman {
	t.Helper()
	conf := filepath.Join(t.TempDir(), "containers.conf")
	if err := os.WriteFile(conf, []byte("[containers]\ndefault_ulimits = []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ways := []podman{
		{bin: bin, name: "podman"},
		{bin: bin, name: "podman with runc, cgroupfs and no default ulimits",
			global: []string{"--runtime", "runc", "--cgroup-manager", "cgroupfs"}, env: []string{"CONTAINERS_CONF=" + conf}},
	}
	var failures []string
	for _, p := range ways {
		out, err := p.run("run", "--rm", image, "version")
		if err == nil && (strings.HasPrefix(out, "hitl ") || strings.Contains(out, "\nhitl ")) {
			t.Logf("containers run with %s (%d before it failed: %q)", p.name, len(failures), failures)
			return p
		}
		failures = append(failures, fmt.Sprintf("%s: %v: %s", p.name, err, lastLine(out)))
	}
	t.Skipf("podman cannot run a container on this machine, so the image is built but not run (TestImageRootfsKeepsAnswersAcrossRestarts runs its files instead):\n%s", strings.Join(failures, "\n"))
	return podman{}
}

// lastLine is the last line of s: podman's error, past its log noise.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// TestImageWithPodman builds the image FROM scratch, with nothing from a
// registry, and runs it as an operator would: a token made on a volume,
// the server with its port published and its health check, a question
// asked and answered, podman stop, a new container on the same volume, and
// the answer still there.
func TestImageWithPodman(t *testing.T) {
	t.Parallel()
	bin, err := exec.LookPath("podman")
	if err != nil {
		t.Skip("podman is not installed (apt-get install podman): the image is not built here")
	}
	img := readDockerfile(t)
	root := rootfs(t)
	suffix := make([]byte, 4)
	rand.Read(suffix)
	name := "hitl-test-" + hex.EncodeToString(suffix)
	tag := "localhost/" + name + ":latest"

	// The build context: the Dockerfile beside the rootfs.
	context := filepath.Dir(root)
	src, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(context, "Dockerfile"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	build := podman{bin: bin}
	if out, err := build.run("build", "--format", "docker", "-t", tag, "-f", filepath.Join(context, "Dockerfile"), context); err != nil {
		t.Fatalf("podman build: %v\n%s", err, out)
	}
	t.Cleanup(func() { build.run("rmi", "-f", tag) })

	p := podmanThatRuns(t, bin, tag)
	if out, err := p.run("volume", "create", name); err != nil {
		t.Fatalf("volume create: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		p.run("rm", "-f", name)
		p.run("volume", "rm", "-f", name)
	})
	token, err := p.stdout("run", "--rm", "-v", name+":"+img.volume, tag, "token", "create", "--name", "admin", "--role", "admin")
	if err != nil || !strings.HasPrefix(token, "hitl_") {
		t.Fatalf("token create in the container: %v: %q", err, token)
	}
	port := freePort(t)
	addr := "127.0.0.1:" + port
	start := func() {
		t.Helper()
		if out, err := p.run("run", "-d", "--name", name, "-p", addr+":"+img.port, "-v", name+":"+img.volume, tag); err != nil {
			t.Fatalf("podman run: %v\n%s", err, out)
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			out, err := p.run("healthcheck", "run", name)
			if err == nil {
				return
			}
			if time.Now().After(deadline) {
				logs, _ := p.run("logs", name)
				t.Fatalf("the container never became healthy: %v %s\nits log:\n%s", err, lastLine(out), logs)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	stop := func() {
		t.Helper()
		if out, err := p.run("stop", "-t", "20", name); err != nil {
			t.Fatalf("podman stop: %v\n%s", err, out)
		}
		if code, _ := p.stdout("inspect", name, "--format", "{{.State.ExitCode}}"); code != "0" {
			t.Errorf("hitl serve in the container exited with %s after podman stop, want 0", code)
		}
		if out, err := p.run("rm", name); err != nil {
			t.Fatalf("podman rm: %v\n%s", err, out)
		}
	}

	start()
	if user, _ := p.stdout("inspect", name, "--format", "{{.Config.User}}"); user != img.user {
		t.Errorf("the container runs as %q, want %q", user, img.user)
	}
	id := ask(t, addr, token)
	answer(t, addr, token, id)
	stop()

	start()
	if got := status(t, addr, token, id); got != "answered true" {
		t.Errorf("after podman stop and a new container on the same volume: %s, want answered true", got)
	}
	stop()
}
