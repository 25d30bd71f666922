package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"io"
	"regexp"
	"strings"
	"testing"
)

// helpFlag is one flag as -h prints it.
type helpFlag struct {
	command, name, arg, usage string
}

// commandFlags runs "hitl <path> -h" and returns the flags it prints, and
// the subcommands it lists (under "Commands:" or "Agents:").
func commandFlags(t *testing.T, path []string) (flags []helpFlag, subs []string) {
	t.Helper()
	var out bytes.Buffer
	run(context.Background(), append(append([]string{}, path...), "-h"), &out, &out)
	var (
		section string
		cur     *helpFlag
	)
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "Commands:" || line == "Flags:":
			section = line
			continue
		case strings.HasSuffix(line, "Agents:"): // hitl hook's
			section = "Agents:"
			continue
		case line == "":
			if section != "Flags:" {
				section = ""
			}
			continue
		}
		switch section {
		case "Commands:", "Agents:":
			if f := strings.Fields(line); len(f) > 0 && strings.HasPrefix(line, "  ") {
				subs = append(subs, f[0])
			}
		case "Flags:":
			if strings.HasPrefix(line, "  -") {
				f := strings.Fields(line)
				flags = append(flags, helpFlag{command: strings.Join(path, " "), name: strings.TrimPrefix(f[0], "-")})
				cur = &flags[len(flags)-1]
				if len(f) > 1 {
					cur.arg = f[1]
				}
				continue
			}
			if cur != nil {
				cur.usage += " " + strings.TrimSpace(line)
			}
		}
	}
	return flags, subs
}

// trueOrFalse matches what a flag's help says when it takes true or false.
var trueOrFalse = regexp.MustCompile(`(?i)\btrue or false\b|\btrue/false\b|\(default (true|false)\)`)

// Every flag that is true or false is a boolean flag: --flag alone turns it
// on, so "hitl serve --webhook-allow-private" does not print the usage.
// The test walks every command and subcommand's -h.
func TestTrueFalseFlagsAreBoolean(t *testing.T) {
	var walk func(path []string)
	seen := 0
	walk = func(path []string) {
		flags, subs := commandFlags(t, path)
		for _, f := range flags {
			seen++
			if f.arg != "" && trueOrFalse.MatchString(f.usage) {
				t.Errorf("hitl %s --%s takes a %s but says it is true or false: make it a boolean flag (envBoolVar)\n%s", f.command, f.name, f.arg, f.usage)
			}
		}
		for _, s := range subs {
			if s != "help" {
				walk(append(append([]string{}, path...), s))
			}
		}
	}
	for _, c := range commands() {
		if c.run != nil {
			walk([]string{c.name})
		}
	}
	if seen < 50 {
		t.Errorf("walked %d flags; want every command's (is -h's format still read right?)", seen)
	}
}

func TestEnvBoolFlag(t *testing.T) {
	tests := []struct {
		name      string
		env       string
		args      []string
		want, set bool
		wantErr   bool
	}{
		{name: "unset"},
		{name: "alone", args: []string{"--on"}, want: true, set: true},
		{name: "=true", args: []string{"--on=true"}, want: true, set: true},
		{name: "=false", args: []string{"--on=false"}, set: true},
		{name: "=0", args: []string{"--on=0"}, set: true},
		{name: "env true", env: "true", want: true, set: true},
		{name: "env 1", env: "1", want: true, set: true},
		{name: "env false", env: "false", set: true},
		{name: "env 0", env: "0", set: true},
		{name: "the flag wins over env", env: "true", args: []string{"--on=false"}, set: true},
		{name: "flag alone wins over env", env: "0", args: []string{"--on"}, want: true, set: true},
		{name: "env not a boolean", env: "yes please", wantErr: true},
		{name: "a bad env, given on the command line", env: "yes please", args: []string{"--on=false"}, set: true},
		{name: "flag not a boolean", args: []string{"--on=maybe"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("HITL_TEST_ON", tt.env)
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			b := envBoolVar(fs, "on", "HITL_TEST_ON", "turn it on")
			_, ok := parse(fs, tt.args, 2)
			if ok == tt.wantErr {
				t.Fatalf("parse(%q) with HITL_TEST_ON=%q: ok %t, want %t", tt.args, tt.env, ok, !tt.wantErr)
			}
			if !ok {
				return
			}
			if v, set := b.given(); v != tt.want || set != tt.set {
				t.Errorf("given() = %t, %t; want %t, %t", v, set, tt.want, tt.set)
			}
			if b.on() != tt.want {
				t.Errorf("on() = %t; want %t", b.on(), tt.want)
			}
		})
	}
}

// The serve flags that were strings, given alone.
func TestServeBooleanFlagsAlone(t *testing.T) {
	for _, env := range []string{"HITL_WEBHOOK_ALLOW_PRIVATE", "HITL_EMAIL_ENABLED", "HITL_SLACK_ENABLED", "HITL_INSECURE_NO_AUTH", "HITL_PUBLIC_METRICS"} {
		t.Setenv(env, "")
	}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	wh, em, sl, au := webhookFlags(fs), emailFlags(fs), slackFlags(fs), authFlags(fs)
	if _, ok := parse(fs, []string{"--webhook-allow-private", "--email-enabled", "--slack-enabled=false", "--public-metrics"}, 2); !ok {
		t.Fatal("parse refused the boolean flags given alone")
	}
	if !wh.allowPrivate.on() {
		t.Error("--webhook-allow-private alone: off")
	}
	es, err := em.settings()
	if err != nil || es.Enabled == nil || !*es.Enabled {
		t.Errorf("--email-enabled alone: %v, %v; want on", es.Enabled, err)
	}
	ss, err := sl.settings()
	if err != nil || ss.Enabled == nil || *ss.Enabled {
		t.Errorf("--slack-enabled=false: %v, %v; want off", ss.Enabled, err)
	}
	if !au.publicMetrics.on() || au.insecure.on() {
		t.Errorf("--public-metrics alone: %t, --insecure-no-auth unset: %t", au.publicMetrics.on(), au.insecure.on())
	}
}
