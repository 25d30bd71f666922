package deploy

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pb33f/go-yaml"
)

// TestComposeFile checks what the compose file and its Caddyfile must
// agree on: two hitl replicas of the image on one PostgreSQL with one
// secret key, and Caddy spreading requests over exactly those replicas on
// the port the image listens on, taking out one whose /readyz fails.
func TestComposeFile(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var compose struct {
		Services map[string]struct {
			Image       string            `yaml:"image"`
			Environment map[string]string `yaml:"environment"`
			Volumes     []string          `yaml:"volumes"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(src, &compose); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	img := readDockerfile(t)
	_, port, _ := strings.Cut(img.env["HITL_ADDR"], ":")

	var replicas []string
	for name, s := range compose.Services {
		if s.Image != "hitl:latest" {
			continue
		}
		replicas = append(replicas, name+":"+port)
		if !strings.HasPrefix(s.Environment["HITL_DB"], "postgres://") || !strings.Contains(s.Environment["HITL_DB"], "@postgres:5432/") {
			t.Errorf("%s: HITL_DB %q, want the postgres service", name, s.Environment["HITL_DB"])
		}
		if !strings.Contains(s.Environment["HITL_SECRET_KEY"], "${HITL_SECRET_KEY") {
			t.Errorf("%s: HITL_SECRET_KEY %q, want the one variable every replica shares", name, s.Environment["HITL_SECRET_KEY"])
		}
	}
	slices.Sort(replicas)
	if len(replicas) != 2 {
		t.Fatalf("compose.yaml runs %d hitl replicas (%v), want 2", len(replicas), replicas)
	}
	if _, ok := compose.Services["postgres"]; !ok {
		t.Error("compose.yaml has no postgres service")
	}
	caddy, ok := compose.Services["caddy"]
	if !ok || !slices.ContainsFunc(caddy.Volumes, func(v string) bool { return strings.HasPrefix(v, "./Caddyfile:") }) {
		t.Errorf("compose.yaml: caddy %+v, want it to mount ./Caddyfile", caddy)
	}

	caddyfile, err := os.ReadFile("Caddyfile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*reverse_proxy ([^{\n]+)`).FindSubmatch(caddyfile)
	if m == nil {
		t.Fatal("Caddyfile has no reverse_proxy")
	}
	upstreams := strings.Fields(string(m[1]))
	slices.Sort(upstreams)
	if !slices.Equal(upstreams, replicas) {
		t.Errorf("Caddyfile proxies to %v, want the replicas %v", upstreams, replicas)
	}
	if !regexp.MustCompile(`(?m)^\s*health_uri /readyz$`).Match(caddyfile) {
		t.Error("Caddyfile does not check the replicas' /readyz")
	}
}
