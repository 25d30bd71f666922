package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

//go:generate go test -run ^TestConfigurationReference$ -update-config-reference .

var updateConfigReference = flag.Bool("update-config-reference", false, "write docs/configuration.md from the flag sets")

// configReferencePath is the generated page.
const configReferencePath = "../../docs/configuration.md"

// envOnly are the variables hitl reads that no flag stands for.
var envOnly = []struct{ name, what string }{
	{"HITL_TOKEN", "the API token `hitl ask`, `ls`, `answer`, `cancel`, `handoff`, `rule`, `webhook`, `mcp`, `hook` and `bench --server` send as `Authorization: Bearer …`"},
	{"HITL_SECRET_KEY", "the 32-byte key (base64) that encrypts the secrets kept in the database (Slack tokens, the SMTP URL, the webhook secret, the VAPID key); wins over `--secret-key-file`; every PostgreSQL replica needs the same one"},
}

// flagsOfCommand is one command's flags, as its flag set holds them.
type flagsOfCommand struct {
	path     string // "token create"
	synopsis string // the first line of its -h
	flags    []*flag.Flag
}

// collectFlags runs every command and subcommand with -h and returns
// their flag sets, in the order "hitl help" lists them.
func collectFlags(t *testing.T) []flagsOfCommand {
	t.Helper()
	var out []flagsOfCommand
	var visit func(path []string)
	visit = func(path []string) {
		var made []*flag.FlagSet
		flagSetMade = func(fs *flag.FlagSet) { made = append(made, fs) }
		var stdout, stderr bytes.Buffer
		run(context.Background(), append(slices.Clone(path), "-h"), &stdout, &stderr)
		flagSetMade = nil
		help := stdout.String() + stderr.String()
		for _, fs := range made {
			c := flagsOfCommand{path: strings.Join(path, " ")}
			if line, _, _ := strings.Cut(help, "\n"); strings.HasPrefix(line, "Usage: ") {
				c.synopsis = strings.TrimPrefix(line, "Usage: ")
			}
			fs.VisitAll(func(f *flag.Flag) { c.flags = append(c.flags, f) })
			if len(c.flags) > 0 {
				out = append(out, c)
			}
		}
		for _, sub := range listedCommands(help) {
			visit(append(slices.Clone(path), sub))
		}
	}
	for _, c := range commands() {
		if c.run != nil {
			visit([]string{c.name})
		}
	}
	return out
}

// listedCommands returns the first word of each line of the "Commands:"
// or "Agents:" list of a -h text: the subcommands to visit.
func listedCommands(help string) []string {
	var names []string
	for _, heading := range []string{"\nCommands:\n", "Agents:\n"} {
		_, list, ok := strings.Cut(help, heading)
		if !ok {
			continue
		}
		for _, line := range strings.Split(list, "\n") {
			if !strings.HasPrefix(line, "  ") {
				break
			}
			names = append(names, strings.Fields(line)[0])
		}
	}
	return names
}

// envInUsage finds the variable a flag's usage names in parentheses.
var envInUsage = regexp.MustCompile(` ?\((HITL_[A-Z0-9_]+)\)`)

// configurationReference renders docs/configuration.md.
func configurationReference(cmds []flagsOfCommand) string {
	var b strings.Builder
	b.WriteString(`<!-- Generated from hitl's flag sets by cmd/hitl/configref_test.go; do not edit.
     Regenerate with: go generate ./cmd/hitl
     (TestConfigurationReference fails when this page differs from the code.) -->

# Configuration reference

Every flag of every ` + "`hitl`" + ` command, the environment variable it falls back to and its
default. Configuration by environment alone works everywhere (a container, a systemd unit):
each ` + "`HITL_*`" + ` variable below is read when its flag is not given, and the flag wins when both
are. A flag that is on or off is turned on by its name alone (` + "`--public-metrics`" + `) and off
with ` + "`=false`" + `; its variable takes ` + "`true`/`false`" + ` or ` + "`1`/`0`" + `, and any other value is refused at
start. For Slack and email, flags and variables also win over what was saved through the API
or the web inbox, and are reported in ` + "`from_environment`" + `.

Variables with no flag:

| variable | |
|---|---|
`)
	for _, e := range envOnly {
		fmt.Fprintf(&b, "| `%s` | %s |\n", e.name, e.what)
	}
	b.WriteString("\nCommands: ")
	for i, c := range cmds {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "[%s](#%s)", c.path, anchor("hitl "+c.path))
	}
	b.WriteString(".\n")
	for _, c := range cmds {
		fmt.Fprintf(&b, "\n## hitl %s\n\n", c.path)
		if c.synopsis != "" {
			fmt.Fprintf(&b, "`%s`\n\n", c.synopsis)
		}
		b.WriteString("| flag | variable | default | |\n|---|---|---|---|\n")
		for _, f := range c.flags {
			name, usage := flag.UnquoteUsage(f)
			env := ""
			if m := envInUsage.FindAllStringSubmatchIndex(usage, -1); m != nil {
				last := m[len(m)-1]
				env = "`" + usage[last[2]:last[3]] + "`"
				usage = usage[:last[0]] + usage[last[1]:]
			}
			flagText := "`--" + f.Name
			if name != "" {
				flagText += " " + name
			}
			flagText += "`"
			def := f.DefValue
			switch {
			case def == "" || def == "0" || def == "0s" || def == "[]":
				def = ""
			default:
				def = "`" + def + "`"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", flagText, env, def, cell(usage))
		}
	}
	return b.String()
}

// cell makes text one Markdown table cell.
func cell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.ReplaceAll(s, "|", `\|`)
}

// anchor is the id GitHub gives a heading.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}

// clearHitlEnv unsets every HITL_* variable for the test, so that the
// defaults are the code's, not this machine's.
func clearHitlEnv(t *testing.T) {
	t.Helper()
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "HITL_") {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
}

// TestConfigurationReference fails when docs/configuration.md is not what
// the flag sets make of it; go generate ./cmd/hitl rewrites it.
func TestConfigurationReference(t *testing.T) {
	clearHitlEnv(t)
	cmds := collectFlags(t)
	var paths []string
	for _, c := range cmds {
		paths = append(paths, c.path)
	}
	for _, want := range []string{"serve", "ask", "mcp", "hook claude-code", "hook codex", "token create", "bench"} {
		if !slices.Contains(paths, want) {
			t.Errorf("the reference has no hitl %s; it has %q", want, paths)
		}
	}
	got := configurationReference(cmds)
	if *updateConfigReference {
		if err := os.WriteFile(configReferencePath, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	have, err := os.ReadFile(configReferencePath)
	if err != nil {
		t.Fatalf("%v: run go generate ./cmd/hitl", err)
	}
	if string(have) != got {
		t.Errorf("docs/configuration.md is not what the code's flags make: run go generate ./cmd/hitl\n%s", firstDifference(string(have), got))
	}
}

// firstDifference shows the first line where have and want differ.
func firstDifference(have, want string) string {
	h, w := strings.Split(have, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(h) || i < len(w); i++ {
		var hl, wl string
		if i < len(h) {
			hl = h[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if hl != wl {
			return fmt.Sprintf("line %d:\n the page: %s\n the code: %s", i+1, hl, wl)
		}
	}
	return ""
}

// TestConfigurationReferenceHasEveryVariable fails when the command reads a
// HITL_* variable that neither a flag's usage nor envOnly names, so none
// goes undocumented.
func TestConfigurationReferenceHasEveryVariable(t *testing.T) {
	clearHitlEnv(t)
	documented := map[string]bool{}
	for _, e := range envOnly {
		documented[e.name] = true
	}
	for _, c := range collectFlags(t) {
		for _, f := range c.flags {
			for _, m := range envInUsage.FindAllStringSubmatch(f.Usage, -1) {
				documented[m[1]] = true
			}
		}
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	read := regexp.MustCompile(`(?:envOr\(|Getenv\(|envBoolVar\(fs, "[^"]*", )"(HITL_[A-Z0-9_]+)"`)
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range read.FindAllStringSubmatch(string(src), -1) {
			used[m[1]] = true
		}
	}
	if len(used) < 10 {
		t.Fatalf("found only %d variables read: %v", len(used), used)
	}
	for v := range used {
		if !documented[v] {
			t.Errorf("cmd/hitl reads %s, which no flag's usage (\"… (%s)\") nor envOnly names", v, v)
		}
	}
	for _, e := range envOnly {
		if !used[e.name] {
			t.Errorf("envOnly lists %s, which cmd/hitl does not read", e.name)
		}
	}
}
