package server_test

import (
	"bytes"
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/secret"
	"github.com/hitl-sh/hitl/server"
	"github.com/hitl-sh/hitl/webpush"
)

func TestPushAPI(t *testing.T) {
	ss := newChannelServer(t, func(t testing.TB, e *hitltest.Engine, opts *server.Options) {
		cipher, err := secret.NewCipher(bytes.Repeat([]byte{7}, secret.KeySize), hitl.ChannelPush)
		if err != nil {
			t.Fatal(err)
		}
		wp := webpush.New(e.Broker, e.Store, &webpush.Options{Cipher: cipher, Identities: e.Store, AllowPrivate: true})
		if err := wp.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		e.OnClose(func() { wp.Close() })
		opts.Push = wp
	})

	if code, _ := ss.call(t, "", "GET", "/api/v1/push/key", ""); code != http.StatusUnauthorized {
		t.Errorf("GET /api/v1/push/key without credentials: %d; want 401", code)
	}
	code, body := ss.call(t, ss.responder, "GET", "/api/v1/push/key", "")
	var key struct {
		PublicKey string `json:"public_key"`
	}
	json.Unmarshal(body, &key)
	if raw, err := base64.RawURLEncoding.DecodeString(key.PublicKey); code != http.StatusOK || err != nil || len(raw) != 65 {
		t.Fatalf("GET /api/v1/push/key: %d %s; want a 65-byte P-256 point, base64url", code, body)
	}

	k, _ := ecdh.P256().GenerateKey(rand.Reader)
	auth := make([]byte, 16)
	rand.Read(auth)
	sub := func(endpoint string) string {
		b, _ := json.Marshal(map[string]any{"endpoint": endpoint, "expirationTime": nil, "untargeted": true, "keys": map[string]string{
			"p256dh": base64.RawURLEncoding.EncodeToString(k.PublicKey().Bytes()), "auth": base64.RawURLEncoding.EncodeToString(auth),
		}})
		return string(b)
	}
	endpoint := "http://127.0.0.1:9/push/bob"
	if code, body = ss.call(t, ss.responder, "POST", "/api/v1/push/subscriptions", sub("http://push.example.com/bob")); code != http.StatusBadRequest || !bytes.Contains(body, []byte("https")) {
		t.Errorf("a plain http endpoint off loopback: %d %s; want 400 about https", code, body)
	}
	if code, body = ss.call(t, ss.responder, "POST", "/api/v1/push/subscriptions", sub(endpoint)); code != http.StatusCreated || bytes.Contains(body, []byte("p256dh")) {
		t.Fatalf("POST /api/v1/push/subscriptions: %d %s; want 201 without the keys", code, body)
	}
	subs, err := ss.store.PushSubscriptions(context.Background(), "bob")
	if err != nil || len(subs) != 1 || subs[0].Endpoint != endpoint || !subs[0].Untargeted {
		t.Fatalf("bob's subscriptions = %+v, %v; want the one posted", subs, err)
	}
	del := `{"endpoint":"` + endpoint + `"}`
	if code, body = ss.call(t, ss.admin, "DELETE", "/api/v1/push/subscriptions", del); code != http.StatusOK || !bytes.Contains(body, []byte(`"deleted":false`)) {
		t.Errorf("an admin deleting bob's subscription by endpoint: %d %s; want deleted false (only one's own)", code, body)
	}
	if code, body = ss.call(t, ss.responder, "DELETE", "/api/v1/push/subscriptions", del); code != http.StatusOK || !bytes.Contains(body, []byte(`"deleted":true`)) {
		t.Errorf("DELETE /api/v1/push/subscriptions: %d %s; want deleted true", code, body)
	}
}
