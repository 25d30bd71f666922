package mcpserver

import (
	"bytes"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Over Streamable HTTP the SDK refuses, in its transport, every method it
// does not know, before any middleware could see it. So task requests are
// answered in front of the SDK's handler: taskHandler reads each POSTed
// message, answers a task request itself with a JSON response (which the
// transport allows for any request), and hands everything else to the
// SDK untouched. A task request needs no SDK session: tasks belong to the
// caller, not to a connection, so a client may create a task on one
// session, replica or server run and read it on another. The caller is
// the request's own (its token), never the session's.

// maxTaskBody bounds the message read to see whether it is a task
// request; a larger one goes to the SDK as it came.
const maxTaskBody = 4 << 20

// taskHandler answers task requests and passes the rest to next.
type taskHandler struct {
	s    *Server
	next http.Handler
}

func (h *taskHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.Body == nil {
		h.next.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxTaskBody+1))
	rest := r.Body
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(body), rest), rest}
	if err != nil || len(body) > maxTaskBody {
		h.next.ServeHTTP(w, r)
		return
	}
	msg, err := jsonrpc.DecodeMessage(body)
	req, ok := msg.(*jsonrpc.Request)
	if err != nil || !ok || !isTaskRequest(req) {
		h.next.ServeHTTP(w, r)
		return
	}
	session := r.Header.Get("Mcp-Session-Id")
	resp := h.s.serveTask(r.Context(), req, h.s.clients.get(session))
	if resp == nil {
		return // the client went away
	}
	out, err := jsonrpc.EncodeMessage(resp)
	if err != nil {
		http.Error(w, "encode response: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if session != "" {
		w.Header().Set("Mcp-Session-Id", session)
	}
	_, _ = w.Write(out)
}
