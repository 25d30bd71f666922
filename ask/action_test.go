package ask_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/ask"
)

// TestAction runs ask.Action and ask.ActionOf in process and over HTTP,
// for each decision.
func TestAction(t *testing.T) {
	t.Parallel()
	type file struct {
		Path    string `json:"file_path"`
		Content string `json:"content"`
	}
	proposal := file{Path: "src/a.go", Content: "package a\n"}
	for _, e := range newEnvs(t) {
		t.Run(e.name, func(t *testing.T) {
			ctx := context.Background()
			tests := []struct {
				answer string
				want   ask.Decision
			}{
				{`"approve"`, ask.Decision{Kind: hitl.DecisionApprove, Args: json.RawMessage(`{"file_path":"src/a.go","content":"package a\n"}`)}},
				{`{"decision":"edit","args":{"file_path":"src/b.go","content":"package a\n"}}`, ask.Decision{Kind: hitl.DecisionEdit, Args: json.RawMessage(`{"content":"package a\n","file_path":"src/b.go"}`)}},
				{`{"decision":"reject","message":"wrong package"}`, ask.Decision{Kind: hitl.DecisionReject, Message: "wrong package"}},
				{`{"decision":"respond","message":"write it in src/b.go instead"}`, ask.Decision{Kind: hitl.DecisionRespond, Message: "write it in src/b.go instead"}},
			}
			for _, tt := range tests {
				ch := async(func() (ask.Decision, error) {
					return ask.Action(ctx, e.agent, "Write", proposal, &ask.ActionOptions{Options: ask.Options{SourceAgent: "coder"}})
				})
				in := e.answer(t, tt.answer)
				if in.Type != hitl.TypeAction || in.Action.Name != "Write" || in.Question != "Run Write?" || in.SourceAgent != "coder" {
					t.Errorf("asked %+v", in)
				}
				r := receive(t, ch)
				if r.err != nil {
					t.Fatalf("%s: %v", tt.answer, r.err)
				}
				if r.v.Kind != tt.want.Kind || !hitl.JSONEqual(orNull(r.v.Args), orNull(tt.want.Args)) || r.v.Message != tt.want.Message {
					t.Errorf("%s: got %+v (args %s), want %+v", tt.answer, r.v, r.v.Args, tt.want)
				}
				if r.v.Run() != (tt.want.Kind == hitl.DecisionApprove || tt.want.Kind == hitl.DecisionEdit) {
					t.Errorf("%s: Run() = %v", tt.answer, r.v.Run())
				}
			}

			// Typed: T's schema is what an edit must meet.
			ch := async(func() (ask.DecisionOf[file], error) {
				return ask.ActionOf(ctx, e.agent, "Write", proposal, nil)
			})
			in := e.waiting(t)
			if _, err := e.person.Respond(ctx, in.ID, json.RawMessage(`{"decision":"edit","args":{"file_path":"x"}}`)); !errors.Is(err, hitl.ErrValue) {
				t.Errorf("an edit missing a field of T: %v, want 422", err)
			}
			e.answer(t, `{"decision":"edit","args":{"file_path":"src/c.go","content":"package c\n"}}`)
			r := receive(t, ch)
			if r.err != nil || r.v.Kind != hitl.DecisionEdit || r.v.Args != (file{"src/c.go", "package c\n"}) {
				t.Errorf("ActionOf edit: %+v, %v", r.v, r.err)
			}
			ch = async(func() (ask.DecisionOf[file], error) {
				return ask.ActionOf(ctx, e.agent, "Write", proposal, nil)
			})
			e.answer(t, `"yes"`)
			if r := receive(t, ch); r.err != nil || r.v.Kind != hitl.DecisionApprove || r.v.Args != proposal {
				t.Errorf("ActionOf approve: %+v, %v", r.v, r.err)
			}
		})
	}
}

func TestActionErrors(t *testing.T) {
	t.Parallel()
	for _, e := range newEnvs(t) {
		t.Run(e.name, func(t *testing.T) {
			ctx := context.Background()
			if _, err := ask.Action(ctx, e.agent, "Bash", []string{"ls"}, nil); !errors.Is(err, hitl.ErrInvalid) {
				t.Errorf("args an array: %v, want invalid", err)
			}
			if _, err := ask.Action(ctx, e.agent, "Bash", func() {}, nil); !errors.Is(err, hitl.ErrInvalid) {
				t.Errorf("args that do not encode: %v, want invalid", err)
			}
			_, err := ask.Action(ctx, e.agent, "Bash", map[string]string{"command": "ls"}, &ask.ActionOptions{Options: ask.Options{Timeout: 50 * time.Millisecond}})
			if !errors.Is(err, hitl.ErrExpired) {
				t.Errorf("nobody answers: %v, want expired", err)
			}
			// The default decision applies at the deadline.
			d, err := ask.Action(ctx, e.agent, "Bash", map[string]string{"command": "ls"}, &ask.ActionOptions{Options: ask.Options{
				Timeout: 50 * time.Millisecond, UseDefaultOnTimeout: true,
				Default: ask.Decision{Kind: hitl.DecisionReject, Message: "nobody answered"},
			}})
			if err != nil || d.Kind != hitl.DecisionReject || d.Message != "nobody answered" {
				t.Errorf("default: %+v, %v", d, err)
			}
		})
	}
}

func orNull(b json.RawMessage) json.RawMessage {
	if b == nil {
		return json.RawMessage("null")
	}
	return b
}
