package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
)

// rulesFlatness measures the HTTP hook's rule-decided p50 with 10 rules in
// force and then with cfg.Rules: the rules that do not decide the call are
// what a team's rule set grows with — allow and deny rules for other
// programs, on the shell kind for every agent and on Claude Code's Bash.
// The ids of the rules it makes are appended to ids.
func rulesFlatness(ctx context.Context, cfg HooksConfig, a *api, res *HooksResult, ids *[]string) error {
	const small = 10
	if err := addOtherRules(ctx, a, len(*ids), small, ids); err != nil {
		return err
	}
	p10, err := httpHookP50(ctx, a, cfg.Samples)
	if err != nil {
		return err
	}
	if err := addOtherRules(ctx, a, len(*ids), cfg.Rules, ids); err != nil {
		return err
	}
	pBig, err := httpHookP50(ctx, a, cfg.Samples)
	if err != nil {
		return err
	}
	res.RulesP50 = map[string]float64{strconv.Itoa(small): ms(p10), strconv.Itoa(cfg.Rules): ms(pBig)}
	r := ratio(pBig, p10)
	res.Rules10kVs10P50 = &r
	return nil
}

// otherRule is the body of the i-th rule that does not decide the bench
// call: every fourth a deny (read widely: it must be checked against
// every command), the rest allows, alternately on the shell kind and on
// Claude Code's Bash, each for a program of its own.
func otherRule(i int) string {
	prefix := fmt.Sprintf("tool%d deploy --target env%d", i, i%97)
	target := `"source_agent":"*","kind":"shell"`
	if i%2 == 1 {
		target = `"source_agent":"claude-code","action_name":"Bash"`
	}
	if i%4 == 0 {
		return fmt.Sprintf(`{"effect":"deny",%s,"match":{"arg":"command","prefix":%q},"message":"not from an agent"}`, target, prefix)
	}
	return fmt.Sprintf(`{"effect":"allow",%s,"match":{"arg":"command","prefix":%q}}`, target, prefix)
}

// addOtherRules makes rules until have reaches want, four at a time.
func addOtherRules(ctx context.Context, a *api, have, want int, ids *[]string) error {
	work := make(chan int)
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	for range 4 {
		wg.Go(func() {
			for i := range work {
				id, err := createRule(ctx, a, otherRule(i))
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				if err == nil {
					*ids = append(*ids, id)
				}
				mu.Unlock()
			}
		})
	}
	for i := have; i < want; i++ {
		mu.Lock()
		failed := firstErr != nil
		mu.Unlock()
		if failed {
			break
		}
		work <- i
	}
	close(work)
	wg.Wait()
	return firstErr
}

// jsonField returns the string field name of the JSON object data, or "".
func jsonField(data []byte, name string) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil {
		return ""
	}
	var s string
	if json.Unmarshal(m[name], &s) != nil {
		return ""
	}
	return s
}
