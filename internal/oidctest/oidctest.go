// Package oidctest runs a real OpenID Provider on a loopback address for
// tests: the zitadel/oidc example OP (its discovery, keys, signing, login
// page and code flow unchanged), with the people a test gives it and a
// groups claim in their ID tokens that a test may change between
// sign-ins.
package oidctest

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// Password is every person's password at the provider.
const Password = "verysecure"

// Person is someone who can sign in at the provider.
type Person struct {
	// ID is the subject of their ID tokens.
	ID string
	// Username is what they type on the provider's login page.
	Username string
	Email    string
	// EmailUnverified makes the provider say it did not verify Email.
	EmailUnverified bool
	Name            string
	Groups          []string
}

// Client is an application registered with the provider.
type Client struct {
	ID, Secret   string
	RedirectURIs []string
}

// OP is a running provider.
type OP struct {
	// Issuer is its issuer URL (http://127.0.0.1:PORT).
	Issuer string

	mu     sync.Mutex
	people map[string]*Person
}

// Start runs a provider with clients and people until the test ends.
func Start(t testing.TB, clients []Client, people ...Person) *OP {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("oidctest: listen: %v", err)
	}
	o := &OP{Issuer: "http://" + ln.Addr().String(), people: map[string]*Person{}}
	for _, p := range people {
		o.people[p.ID] = &p
	}
	regs := map[string]*storage.Client{}
	for _, c := range clients {
		regs[c.ID] = storage.WebClient(c.ID, c.Secret, c.RedirectURIs...)
	}
	st := &groupStorage{Storage: storage.NewStorageWithClients(userStore{o}, regs), op: o}
	handler := exampleop.SetupServer(o.Issuer, st, nil, false)
	srv := &http.Server{Handler: handler, ErrorLog: nil}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return o
}

// SetGroups replaces the groups of the person with id, for their next
// sign-in.
func (o *OP) SetGroups(id string, groups ...string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.people[id].Groups = groups
}

// groups returns the groups of the person with id.
func (o *OP) groups(id string) []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if p := o.people[id]; p != nil {
		return append([]string(nil), p.Groups...)
	}
	return nil
}

// userStore gives the example storage the test's people.
type userStore struct{ o *OP }

func (u userStore) user(p *Person) *storage.User {
	first, last, _ := strings.Cut(p.Name, " ")
	return &storage.User{ID: p.ID, Username: p.Username, Password: Password, FirstName: first, LastName: last,
		Email: p.Email, EmailVerified: !p.EmailUnverified}
}

func (u userStore) GetUserByID(id string) *storage.User {
	u.o.mu.Lock()
	defer u.o.mu.Unlock()
	if p := u.o.people[id]; p != nil {
		return u.user(p)
	}
	return nil
}

func (u userStore) GetUserByUsername(name string) *storage.User {
	u.o.mu.Lock()
	defer u.o.mu.Unlock()
	for _, p := range u.o.people {
		if p.Username == name {
			return u.user(p)
		}
	}
	return nil
}

func (u userStore) ExampleClientID() string { return storage.ServiceUserID }

// groupStorage is the example storage, with a groups claim in ID tokens.
type groupStorage struct {
	*storage.Storage
	op *OP
}

// SetUserinfoFromRequest adds the person's groups to their ID token's
// claims.
func (s *groupStorage) SetUserinfoFromRequest(ctx context.Context, info *oidc.UserInfo, req op.IDTokenRequest, scopes []string) error {
	if err := s.Storage.SetUserinfoFromRequest(ctx, info, req, scopes); err != nil {
		return err
	}
	if g := s.op.groups(req.GetSubject()); g != nil {
		info.AppendClaims("groups", g)
	}
	return nil
}

// LogIn fills in the provider's login page without a browser: c (with a
// cookie jar, not following redirects) gets authorizeURL, posts the
// person's username and password, and follows the provider's redirects
// until one leaves the provider. It returns that URL: the client's
// redirect URI with the code and state.
func (o *OP) LogIn(t testing.TB, c *http.Client, authorizeURL, username string) *url.URL {
	t.Helper()
	next, err := url.Parse(authorizeURL)
	if err != nil {
		t.Fatalf("oidctest: authorize URL: %v", err)
	}
	issuer, _ := url.Parse(o.Issuer)
	for range 10 {
		if next.Host != issuer.Host {
			return next
		}
		var resp *http.Response
		if next.Path == "/login/username" {
			form := url.Values{"id": {next.Query().Get("authRequestID")}, "username": {username}, "password": {Password}}
			resp, err = c.PostForm(next.String(), form)
		} else {
			resp, err = c.Get(next.String())
		}
		if err != nil {
			t.Fatalf("oidctest: %s: %v", next, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		loc := resp.Header.Get("Location")
		if loc == "" {
			t.Fatalf("oidctest: %s answered %s with no redirect: %s", next, resp.Status, body)
		}
		if next, err = next.Parse(loc); err != nil {
			t.Fatalf("oidctest: redirect %q: %v", loc, err)
		}
	}
	t.Fatalf("oidctest: too many redirects at the provider")
	return nil
}

// NewBrowserlessClient returns an HTTP client with a cookie jar that does
// not follow redirects, for LogIn and for hitl's side of a sign-in.
func NewBrowserlessClient() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}
