package server

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/auth"
	"github.com/hitl-sh/hitl/ui"
)

// embedProtocol is the WebSocket subprotocol of the <hitl-prompt>
// element: it offers it with its embed token as a second subprotocol, so
// that the token travels in a header (Sec-WebSocket-Protocol), never in a
// URL that proxies and access logs record. The server selects it.
const embedProtocol = "hitl-embed"

// embedOrigins is the set of origins whose pages may embed <hitl-prompt>
// (hitl serve --embed-origin), each as scheme://host[:port], lower case.
type embedOrigins map[string]bool

// newEmbedOrigins returns the set of list, normalised; origins that are
// not scheme://host[:port] are left out and returned as bad.
func newEmbedOrigins(list []string) (embedOrigins, []string) {
	set := embedOrigins{}
	var bad []string
	for _, o := range list {
		n, ok := normalOrigin(o)
		if !ok {
			bad = append(bad, o)
			continue
		}
		set[n] = true
	}
	return set, bad
}

// normalOrigin returns o as a browser sends it in Origin: scheme://host
// and the port when it is not the scheme's default, lower case.
func normalOrigin(o string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(o))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", false
	}
	host := strings.ToLower(u.Host)
	if u.Scheme == "http" {
		host = strings.TrimSuffix(host, ":80")
	} else {
		host = strings.TrimSuffix(host, ":443")
	}
	return u.Scheme + "://" + host, true
}

// allows reports whether origin (an Origin header) is one of the set.
func (o embedOrigins) allows(origin string) bool {
	if origin == "" || len(o) == 0 {
		return false
	}
	n, ok := normalOrigin(origin)
	return ok && o[n]
}

// embedRoute reports whether a request for method and p is one the
// <hitl-prompt> element makes: its script and the assets it imports, the
// live channel, reading one interaction and answering it. api reports
// whether it acts through the engine (and so an embed token's scope
// applies), id the interaction it names.
func embedRoute(method, p string) (ok, api bool, id string) {
	switch {
	case method == http.MethodGet && (p == ui.EmbedScriptPath || strings.HasPrefix(p, "/assets/")):
		return true, false, ""
	case method == http.MethodGet && (p == "/ws" || p == "/ws/userinfo"):
		return true, true, ""
	}
	rest, found := strings.CutPrefix(p, "/api/v1/interactions/")
	if !found || rest == "" {
		return false, false, ""
	}
	switch id, tail, _ := strings.Cut(rest, "/"); {
	case method == http.MethodGet && tail == "" && !strings.Contains(rest, "/") && id != "counts":
		return true, true, id
	case method == http.MethodPost && tail == "respond" && id != "":
		return true, true, id
	}
	return false, false, ""
}

// embedCORS lets the pages of the configured embed origins use the
// element's routes (embedRoute) from their origin: it answers their CORS
// preflights and marks their responses readable by exactly that origin
// (with credentials, for a same-site cookie). A page of such an origin
// gets 403 for any other route, so that trusting it with the prompt
// trusts it with nothing else; other origins are as without it (the
// cross-origin protection refuses their writes, browsers keep them from
// reading, and /ws refuses them).
func (s *Server) embedCORS(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		method := r.Method
		preflight := method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
		if preflight {
			method = r.Header.Get("Access-Control-Request-Method")
		}
		ok, _, _ := embedRoute(method, r.URL.Path)
		if ok {
			w.Header().Add("Vary", "Origin")
		}
		origin := r.Header.Get("Origin")
		if origin == "" || sameOrigin(r) || !s.embedOrigins.allows(origin) {
			next.ServeHTTP(w, r)
			return
		}
		if !ok {
			s.writeError(w, r, hitl.Errorf(hitl.EFORBIDDEN, "a page of %s may only use the embedded prompt's routes", origin))
			return
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Allow-Credentials", "true")
		if preflight {
			h.Set("Access-Control-Allow-Methods", "GET, POST")
			h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Idempotency-Key")
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// embedWebSocketOrigin reports whether a WebSocket with r's Origin may
// open: no Origin, this server's own, or an embed origin.
func (s *Server) embedWebSocketOrigin(r *http.Request) bool {
	return sameOrigin(r) || s.embedOrigins.allows(r.Header.Get("Origin"))
}

// embedProtocolToken returns the embed token a WebSocket handshake
// carries as a subprotocol beside embedProtocol.
func embedProtocolToken(r *http.Request) (string, bool) {
	if !headerHasToken(r.Header, "Upgrade", "websocket") || !headerHasToken(r.Header, "Sec-WebSocket-Protocol", embedProtocol) {
		return "", false
	}
	for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
		for t := range strings.SplitSeq(v, ",") {
			if t = strings.TrimSpace(t); t != embedProtocol {
				return t, true
			}
		}
	}
	return "", true
}

// embedCredentials authenticates an embed token: the caller is its user,
// as a responder (whatever the user's own role), on the embed channel.
func (a *authenticator) embedCredentials(ctx context.Context, tok string) (hitl.Caller, credential, error) {
	if !auth.LooksLikeEmbedToken(tok) {
		return hitl.Caller{}, credential{}, hitl.Errorf(hitl.EUNAUTHORIZED, "invalid embed token")
	}
	hash := auth.HashSecret(tok)
	t, u, err := a.ids.EmbedTokenByHash(ctx, hash, a.now())
	if errors.Is(err, hitl.ErrNotFound) {
		return hitl.Caller{}, credential{}, hitl.Errorf(hitl.EUNAUTHORIZED, "invalid embed token: expired, revoked, or never issued by this server")
	} else if err != nil {
		return hitl.Caller{}, credential{}, err
	}
	return hitl.Caller{Name: u.Name, Role: hitl.RoleResponder, Groups: u.Groups, Channel: hitl.ChannelEmbed},
		credential{kind: "embed", embed: t, hash: hash}, nil
}

// embedScope checks that a request with an embed token stays in its
// scope: the element's routes only; a live stream only of the token's
// sessions, named; one interaction only when it belongs to one of them
// (else it is not found, as one the person may not see).
func (s *Server) embedScope(r *http.Request, c hitl.Caller, cred credential) error {
	ok, api, id := embedRoute(r.Method, r.URL.Path)
	if !ok || !api {
		return hitl.Errorf(hitl.EFORBIDDEN, "an embed token may only read and answer the questions of its sessions")
	}
	if id == "" {
		sessions := r.URL.Query()["session_id"]
		if len(sessions) == 0 {
			return hitl.Errorf(hitl.EFORBIDDEN, "an embed token's stream must name its sessions (session_id)")
		}
		for _, sid := range sessions {
			if !cred.embed.Covers(sid) {
				return hitl.Errorf(hitl.EFORBIDDEN, "this embed token does not cover session %q", sid)
			}
		}
		return nil
	}
	in, err := s.broker.Get(hitl.WithCaller(r.Context(), c), id)
	if err != nil {
		return err
	}
	if !cred.embed.Covers(in.SessionID) {
		return hitl.Errorf(hitl.ENOTFOUND, "no interaction %q", id)
	}
	return nil
}
