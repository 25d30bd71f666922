// Package clients_test runs the Python and TypeScript clients' own test
// suites (pytest, and tsc plus node --test) against a hitl binary built
// from this repository, so that go test ./... — and test.sh — covers them.
//
// A suite whose tools are missing is skipped with the command that
// installs them, unless HITL_TEST_REQUIRE_CLIENTS is set (test.sh sets it,
// after installing them), when it fails instead.
package clients_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// python is Debian's Python, which sees Debian's python3-pytest (the
// python3 first on PATH may be another build that does not).
const python = "/usr/bin/python3"

// hitlBin is the binary the suites run, built once by TestMain.
var hitlBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "hitl-clients-")
	if err != nil {
		panic(err)
	}
	hitlBin = filepath.Join(dir, "hitl")
	build := exec.Command("go", "build", "-o", hitlBin, "./cmd/hitl")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		os.Stderr.Write(out)
		os.RemoveAll(dir)
		panic("build hitl: " + err.Error())
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// missing skips the test because a tool is not installed, or fails it when
// HITL_TEST_REQUIRE_CLIENTS is set.
func missing(t *testing.T, what, install string) {
	t.Helper()
	msg := what + " is not installed (" + install + ")"
	if os.Getenv("HITL_TEST_REQUIRE_CLIENTS") != "" {
		t.Fatal(msg + "; HITL_TEST_REQUIRE_CLIENTS is set")
	}
	t.Skip(msg + "; skipping")
}

// run runs a suite's command in dir with the binary under test, and fails
// the test with its output when it fails. It returns the output.
func run(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	ctx := t.Context()
	if d, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-10*time.Second))
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(suiteEnv(), "HITL_BIN="+hitlBin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s in clients/%s: %v\n%s", name, strings.Join(args, " "), dir, err, out.String())
	}
	return out.String()
}

// suiteEnv is the environment without the variables the clients read, so
// a developer's own server settings do not leak into the tests.
func suiteEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "HITL_URL", "HITL_TOKEN", "HITL_AGENT", "HITL_BIN":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// lastLine returns the last line of out matching re, for the log.
func lastLine(out string, re *regexp.Regexp) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if re.MatchString(lines[i]) {
			return strings.TrimSpace(lines[i])
		}
	}
	return ""
}

// trackInputs reads the files the suites run, so that go test's cache
// knows them: a change to a client or its tests runs the suites again.
func trackInputs(t *testing.T, dirs ...string) {
	t.Helper()
	skip := map[string]bool{"node_modules": true, "build": true, "dist": true, "__pycache__": true, ".mypy_cache": true}
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && skip[d.Name()] {
				return filepath.SkipDir
			}
			if !d.IsDir() {
				_, err = os.ReadFile(path)
			}
			return err
		})
		if err != nil {
			t.Fatalf("read the suite's files: %v", err)
		}
	}
}

func TestPython(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat(python); err != nil {
		missing(t, python, "apt-get install python3")
	}
	if exec.Command(python, "-c", "import pytest").Run() != nil {
		missing(t, "pytest for "+python, "apt-get install python3-pytest")
	}
	trackInputs(t, "python", "../cmd/hitl", "../docs/clients.md", "../testdata/agent-inbox.json")
	out := run(t, "python", python, "-m", "pytest", "-q", "-p", "no:cacheprovider")
	t.Log(lastLine(out, regexp.MustCompile(`\d+ passed`)))
}

func TestPythonTypes(t *testing.T) {
	t.Parallel()
	if exec.Command(python, "-m", "mypy", "--version").Run() != nil {
		missing(t, "mypy for "+python, "apt-get install python3-mypy")
	}
	trackInputs(t, "python")
	run(t, "python", python, "-m", "mypy", "--cache-dir=/dev/null")
}

func TestTypeScript(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		missing(t, "node", "apt-get install nodejs (20 or newer)")
	}
	if v, _ := exec.Command(node, "--version").Output(); nodeMajor(string(v)) < 20 {
		missing(t, "node 20 or newer (found "+strings.TrimSpace(string(v))+")", "a newer nodejs")
	}
	if dep := missingDevDependency("typescript"); dep != "" {
		missing(t, dep, "npm ci in clients/typescript")
	}
	trackInputs(t, "typescript", "../cmd/hitl", "../docs/clients.md", "../testdata/agent-inbox.json")
	run(t, "typescript", filepath.Join("node_modules", ".bin", "tsc"), "-p", "tsconfig.json")
	run(t, "typescript", filepath.Join("node_modules", ".bin", "tsc"), "-p", "tsconfig.test.json")
	tests, err := filepath.Glob(filepath.Join("typescript", "build", "test", "*.test.js"))
	if err != nil || len(tests) == 0 {
		t.Fatalf("no compiled tests in clients/typescript/build/test (%v)", err)
	}
	args := []string{"--test"}
	for _, f := range tests {
		args = append(args, strings.TrimPrefix(f, "typescript"+string(filepath.Separator)))
	}
	out := run(t, "typescript", node, args...)
	t.Log(lastLine(out, regexp.MustCompile(`^# pass `)))
}

// missingDevDependency returns the first of the TypeScript package's dev
// dependencies (typescript, and the frameworks its adapters are tested
// against) that is not installed at its pinned version, or "".
func missingDevDependency(dir string) string {
	var pkg struct {
		DevDependencies map[string]string `json:"devDependencies"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil || json.Unmarshal(data, &pkg) != nil {
		return dir + "/package.json"
	}
	for name, version := range pkg.DevDependencies {
		var installed struct{ Version string }
		data, err := os.ReadFile(filepath.Join(dir, "node_modules", name, "package.json"))
		if err != nil || json.Unmarshal(data, &installed) != nil || installed.Version != version {
			return name + " " + version
		}
	}
	return ""
}

// nodeMajor returns the major version of "v20.11.1", or 0.
func nodeMajor(v string) int {
	major, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimSpace(v), "v"), ".")
	n, _ := strconv.Atoi(major)
	return n
}
