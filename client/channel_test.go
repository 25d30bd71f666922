package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/client"
	"github.com/hitl-sh/hitl/internal/hitltest"
)

func TestChannelRecordedOnCreateAnswerAndCancel(t *testing.T) {
	t.Parallel()
	ts := hitltest.Start(t, nil)
	ctx := context.Background()
	tests := []struct {
		channel     string
		wantCreated string // created_via
		wantAnswer  string // the answer's channel
	}{
		{"", hitl.ChannelAPI, hitl.ChannelAPI},
		{hitl.ChannelAPI, hitl.ChannelAPI, hitl.ChannelAPI},
		{hitl.ChannelWeb, hitl.ChannelAPI, hitl.ChannelWeb}, // only answers may claim web
		{hitl.ChannelCLI, hitl.ChannelCLI, hitl.ChannelCLI},
		{hitl.ChannelMCP, hitl.ChannelMCP, hitl.ChannelMCP},
	}
	for _, tt := range tests {
		t.Run("channel="+tt.channel, func(t *testing.T) {
			c := hitltest.NewClient(t, ts.URL, &client.Options{Channel: tt.channel})
			in := mustCreate(t, c, hitl.CreateRequest{Question: "via " + tt.channel + "?"})
			if got := in.CreatedVia; got != tt.wantCreated {
				t.Errorf("created_via = %q, want %q", got, tt.wantCreated)
			}
			answered, err := c.Respond(ctx, in.ID, json.RawMessage(`"fine"`))
			if err != nil {
				t.Fatalf("respond: %v", err)
			}
			if got := answered.Result.Channel; got != tt.wantAnswer {
				t.Errorf("answer channel = %q, want %q", got, tt.wantAnswer)
			}
			other := mustCreate(t, c, hitl.CreateRequest{Question: "withdrawn via " + tt.channel + "?"})
			cancelled, err := c.Cancel(ctx, other.ID, "")
			if err != nil {
				t.Fatalf("cancel: %v", err)
			}
			if got := cancelled.Result.Channel; got != tt.wantCreated {
				t.Errorf("cancel channel = %q, want %q", got, tt.wantCreated)
			}
		})
	}
}

func TestErrUnreachable(t *testing.T) {
	t.Parallel()
	closed := httptest.NewServer(http.NotFoundHandler())
	url := closed.URL
	closed.Close()
	_, _, err := hitltest.NewClient(t, url, nil).Create(context.Background(), hitl.CreateRequest{Question: "anyone?"})
	if !errors.Is(err, hitl.ErrUnreachable) {
		t.Errorf("closed port: err = %v, want one matching ErrUnreachable", err)
	}

	// A server that answers, even with an error, is reachable.
	ts := hitltest.Start(t, nil)
	_, err = hitltest.NewClient(t, ts.URL, nil).Get(context.Background(), "no-such-id")
	if !errors.Is(err, hitl.ErrNotFound) {
		t.Fatalf("unknown id: err = %v, want not found", err)
	}
	if errors.Is(err, hitl.ErrUnreachable) {
		t.Errorf("a 404 matches ErrUnreachable, want it not to")
	}
}
