package hitl

import "encoding/json"

// Project is the directory the agent works in, when it said: the
// metadata's "project" or "cwd" (an agent's hook sends its working
// directory there), or a shell action's cwd; "" when unknown.
func (in *Interaction) Project() string {
	for _, k := range []string{"project", "cwd"} {
		if s, ok := in.Metadata[k].(string); ok && s != "" {
			return s
		}
	}
	if in.Action != nil && in.Action.Kind == KindShell {
		var v struct {
			Cwd string `json:"cwd"`
		}
		if json.Unmarshal(in.Action.Input, &v) == nil {
			return v.Cwd
		}
	}
	return ""
}
