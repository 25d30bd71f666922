package main

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// startAllocBudget bounds the allocations hitl's own packages make while
// they initialise, before main: an agent's command hook starts hitl for
// each tool call, so what they build then (regular expressions,
// templates, renderers) should wait until something uses it. They make
// about 670; with their patterns compiled at start they made about 3,450.
const startAllocBudget = 1500

// validatorAllocBudget bounds the form validator's initialisation: the
// copy in internal/jsonschema compiles its meta-schemas on first use
// (about 160 allocations at start), where upstream's init makes about
// 21,000 and takes 4.5 ms.
const validatorAllocBudget = 1000

// validator is the form validator's package.
const validator = "github.com/hitl-sh/hitl/internal/jsonschema"

// TestStartDoesLittle: hitl's packages initialise within startAllocBudget
// allocations, and the form validator (counted apart) within
// validatorAllocBudget (GODEBUG=inittrace=1 counts them; the count is the
// same on every run of one build, unlike the time).
func TestStartDoesLittle(t *testing.T) {
	cmd := exec.Command(hitlBin, "version")
	cmd.Env = append(cleanEnv(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("hitl version: %v\n%s", err, out)
	}
	total, seen, validatorSeen := 0, 0, false
	var ours []string
	for line := range strings.Lines(string(out)) {
		// init github.com/hitl-sh/hitl/slack @9.2 ms, 0.11 ms clock, 70704 bytes, 735 allocs
		f := strings.Fields(line)
		if len(f) < 10 || f[0] != "init" || f[len(f)-1] != "allocs" {
			continue
		}
		seen++
		n, err := strconv.Atoi(f[len(f)-2])
		if err != nil {
			t.Fatalf("unexpected inittrace line %q", line)
		}
		if f[1] == validator {
			validatorSeen = true
			if n > validatorAllocBudget {
				t.Errorf("%s made %d allocations while initialising, over %d: are its meta-schemas compiled at start again (see its README)?", validator, n, validatorAllocBudget)
			}
			continue
		}
		if f[1] != "github.com/hitl-sh/hitl" && !strings.HasPrefix(f[1], "github.com/hitl-sh/hitl/") {
			continue
		}
		total += n
		ours = append(ours, f[1]+" "+f[len(f)-2])
	}
	if seen == 0 || len(ours) == 0 || !validatorSeen {
		t.Fatalf("no inittrace lines for hitl's packages or %s in:\n%s", validator, out)
	}
	if total > startAllocBudget {
		t.Errorf("hitl's packages made %d allocations while initialising, over %d: build what a command needs when it is first used (sync.OnceValue)\n%s",
			total, startAllocBudget, strings.Join(ours, "\n"))
	}
}
