package storetest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hitl-sh/hitl"
)

// projectSet creates interactions that name their project every way an
// agent can (metadata "project", metadata "cwd", a shell action's cwd)
// and ways that name none, and returns them by name.
func projectSet(t *testing.T, s hitl.Store) map[string]*hitl.Interaction {
	t.Helper()
	mk := func(n int, agent string, meta map[string]any, action *hitl.Action) *hitl.Interaction {
		req := hitl.CreateRequest{Question: "Go on?", Timeout: 3600, SourceAgent: agent, Metadata: meta}
		if action != nil {
			req.Type, req.Action = hitl.TypeAction, &hitl.Action{Name: action.Name, Args: action.Args}
		}
		in := ask(t, req, agent, at(n))
		if action != nil {
			in.Action.Kind, in.Action.Input = action.Kind, action.Input
		}
		return create(t, s, in)
	}
	shell := func(input string) *hitl.Action {
		return &hitl.Action{Name: "Bash", Args: raw(`{"command":"ls"}`), Kind: hitl.KindShell, Input: raw(input)}
	}
	return map[string]*hitl.Interaction{
		"metaProject":  mk(0, "claude-code", map[string]any{"project": "/srv/shop", "cwd": "/srv/shop/web"}, nil),
		"metaCwd":      mk(1, "codex", map[string]any{"cwd": "/srv/shop"}, nil),
		"shellCwd":     mk(2, "claude-code", nil, shell(`{"command":"ls","cwd":"/srv/shop"}`)),
		"emptyProject": mk(3, "codex", map[string]any{"project": "", "cwd": "/srv/shop"}, nil),
		"subdir":       mk(4, "codex", map[string]any{"cwd": "/srv/shop/web"}, nil),
		"numberCwd":    mk(5, "codex", map[string]any{"cwd": 7}, shell(`{"command":"ls","cwd":"/srv/blog"}`)),
		"notShell": mk(6, "claude-code", nil, &hitl.Action{Name: "Write", Args: raw(`{"file_path":"a"}`), Kind: hitl.KindFileWrite,
			Input: raw(`{"path":"a","cwd":"/srv/shop"}`)}),
		"none": mk(7, "codex", map[string]any{"ticket": "OPS-1"}, nil),
	}
}

// testListProject checks that ListFilter.Project keeps the interactions
// whose Project is that directory, exactly (not its subdirectories), in
// the list and in the counts, and that it agrees with Project.
func testListProject(t *testing.T, s hitl.Store) {
	set := projectSet(t, s)
	for _, project := range []string{"/srv/shop", "/srv/shop/web", "/srv/blog", "/srv"} {
		want := []string{}
		for name, in := range set {
			if in.Project() == project {
				want = append(want, name)
			}
		}
		got, _ := list(t, s, hitl.ListFilter{Project: project, Limit: 50})
		if d := cmp.Diff(sorted(want), sorted(names(set, got))); d != "" {
			t.Errorf("Project %q (-want +got):\n%s", project, d)
		}
		c, err := s.CountMatching(t.Context(), hitl.ListFilter{Status: hitl.StatusPending, Project: project}, at(0))
		if err != nil {
			t.Fatalf("CountMatching: %v", err)
		}
		if c.Total != len(want) {
			t.Errorf("CountMatching with Project %q: total %d, want %d", project, c.Total, len(want))
		}
		n, err := s.CountDue(t.Context(), hitl.ListFilter{Status: hitl.StatusPending, Project: project}, at(3600*2))
		if err != nil {
			t.Fatalf("CountDue: %v", err)
		}
		if n != len(want) {
			t.Errorf("CountDue with Project %q: %d, want %d", project, n, len(want))
		}
	}
	// The names the test relies on, so that it cannot pass on an empty set.
	if got := set["shellCwd"].Project(); got != "/srv/shop" {
		t.Fatalf("shellCwd's Project = %q; want /srv/shop", got)
	}
	byProject, _ := list(t, s, hitl.ListFilter{Project: "/srv/shop", Agents: []string{"codex"}, Sort: hitl.SortDeadline})
	if d := cmp.Diff([]string{"metaCwd", "emptyProject"}, names(set, byProject)); d != "" {
		t.Errorf("Project /srv/shop and agent codex, by deadline (-want +got):\n%s", d)
	}
}
