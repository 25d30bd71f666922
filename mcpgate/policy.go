package mcpgate

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"
)

// Policy says which tools' calls a person reviews. By default a call is
// gated unless its tool is annotated readOnlyHint true (and not
// destructiveHint true): an upstream tool that says nothing about itself
// is taken to change something. Review and Pass, tool-name globs
// (path.Match syntax: "write_*", "*"), override the annotations; Review wins over Pass.
type Policy struct {
	// Review names tools whose calls are always reviewed.
	Review []string
	// Pass names tools whose calls always pass without review.
	Pass []string
}

// Check reports a malformed glob.
func (p *Policy) Check() error {
	for _, g := range append(append([]string{}, p.Review...), p.Pass...) {
		if strings.TrimSpace(g) == "" {
			return fmt.Errorf("empty tool-name pattern")
		}
		if _, err := path.Match(g, ""); err != nil {
			return fmt.Errorf("tool-name pattern %q: %w", g, err)
		}
	}
	return nil
}

// Gated reports whether a call of the tool named name, with the
// annotations a (nil when the upstream gave none, or the tool is not
// known), is reviewed, and why.
func (p *Policy) Gated(name string, a *Annotations) (bool, string) {
	switch {
	case p != nil && matchAny(p.Review, name):
		return true, "the gate's policy names it"
	case p != nil && matchAny(p.Pass, name):
		return false, "the gate's policy lets it pass"
	case a == nil:
		return true, "the server does not say it only reads"
	case a.DestructiveHint != nil && *a.DestructiveHint:
		return true, "the server annotates it destructive"
	case a.ReadOnlyHint:
		return false, "the server annotates it read-only"
	}
	return true, "the server does not say it only reads"
}

// matchAny reports whether name matches one of the globs.
func matchAny(globs []string, name string) bool {
	for _, g := range globs {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}

// Annotations are the hints an MCP server gives about a tool (the
// protocol's ToolAnnotations), as the gate reads them.
type Annotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    bool   `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  bool   `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// describe renders the annotations for the person, one Markdown line.
func (a *Annotations) describe() string {
	if a == nil {
		return "The server gives no annotations for this tool."
	}
	var hints []string
	if a.ReadOnlyHint {
		hints = append(hints, "read-only")
	}
	if a.DestructiveHint != nil {
		if *a.DestructiveHint {
			hints = append(hints, "destructive")
		} else {
			hints = append(hints, "not destructive")
		}
	}
	if a.IdempotentHint {
		hints = append(hints, "idempotent")
	}
	if a.OpenWorldHint != nil {
		if *a.OpenWorldHint {
			hints = append(hints, "reaches outside systems")
		} else {
			hints = append(hints, "closed world")
		}
	}
	if len(hints) == 0 {
		return "The server's annotations give no hints for this tool."
	}
	return "The server annotates this tool: " + strings.Join(hints, ", ") + "."
}

// fields returns the annotations as the JSON object the server sent
// (only the hints it gave); nil for none.
func (a *Annotations) fields() map[string]any {
	if a == nil {
		return nil
	}
	b, err := json.Marshal(a)
	if err != nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil || len(m) == 0 {
		return nil
	}
	return m
}
