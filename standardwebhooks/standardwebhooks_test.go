package standardwebhooks_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hitl-sh/hitl/standardwebhooks"
)

// The example of the Standard Webhooks reference libraries' tests.
const (
	vectorSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vectorID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vectorTS     = 1614265330
	vectorBody   = `{"test": 2432232314}`
	vectorSig    = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func TestSignMatchesTheSpecification(t *testing.T) {
	key, err := standardwebhooks.DecodeSecret(vectorSecret)
	if err != nil {
		t.Fatal(err)
	}
	if got := standardwebhooks.Sign(key, vectorID, time.Unix(vectorTS, 0), []byte(vectorBody)); got != vectorSig {
		t.Errorf("Sign: got %s, want %s", got, vectorSig)
	}
}

func headers(id, ts, sig string) http.Header {
	h := http.Header{}
	h.Set("webhook-id", id)
	h.Set("webhook-timestamp", ts)
	h.Set("webhook-signature", sig)
	return h
}

func TestVerify(t *testing.T) {
	v, err := standardwebhooks.NewVerifier(vectorSecret)
	if err != nil {
		t.Fatal(err)
	}
	v.Now = func() time.Time { return time.Unix(vectorTS+60, 0) }
	ts := "1614265330"
	other, _ := standardwebhooks.NewSecret()
	otherKey, _ := standardwebhooks.DecodeSecret(other)
	wrong := standardwebhooks.Sign(otherKey, vectorID, time.Unix(vectorTS, 0), []byte(vectorBody))
	tests := []struct {
		name string
		h    http.Header
		body string
		want error
	}{
		{"valid", headers(vectorID, ts, vectorSig), vectorBody, nil},
		{"one of several", headers(vectorID, ts, "v1,bm90IGl0 v2,abc "+vectorSig), vectorBody, nil},
		{"body altered", headers(vectorID, ts, vectorSig), `{"test": 2432232315}`, standardwebhooks.ErrSignature},
		{"id altered", headers("msg_other", ts, vectorSig), vectorBody, standardwebhooks.ErrSignature},
		{"other secret", headers(vectorID, ts, wrong), vectorBody, standardwebhooks.ErrSignature},
		{"other version", headers(vectorID, ts, strings.Replace(vectorSig, "v1,", "v2,", 1)), vectorBody, standardwebhooks.ErrSignature},
		{"no signature", headers(vectorID, ts, ""), vectorBody, standardwebhooks.ErrMissingHeaders},
		{"bad timestamp", headers(vectorID, "soon", vectorSig), vectorBody, standardwebhooks.ErrTimestamp},
	}
	for _, tt := range tests {
		if got := v.Verify(tt.h, []byte(tt.body)); !errors.Is(got, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
	// Outside the tolerance, even a valid signature is a possible replay.
	v.Now = func() time.Time { return time.Unix(vectorTS+6*60, 0) }
	if got := v.Verify(headers(vectorID, ts, vectorSig), []byte(vectorBody)); !errors.Is(got, standardwebhooks.ErrTimestamp) {
		t.Errorf("an old delivery: got %v, want ErrTimestamp", got)
	}
}

func TestNewSecretRoundTrip(t *testing.T) {
	s, err := standardwebhooks.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s, "whsec_") {
		t.Fatalf("NewSecret: %q lacks whsec_", s)
	}
	key, err := standardwebhooks.DecodeSecret(s)
	if err != nil || len(key) != 32 {
		t.Fatalf("DecodeSecret: %d bytes, %v; want 32", len(key), err)
	}
	h := http.Header{}
	now := time.Now()
	standardwebhooks.SetHeaders(h, key, "msg_1", now, []byte("{}"))
	if err := standardwebhooks.Verify(s, h, []byte("{}")); err != nil {
		t.Errorf("Verify of what SetHeaders signed: %v", err)
	}
	if _, err := standardwebhooks.DecodeSecret("whsec_not base64!"); err == nil {
		t.Errorf("DecodeSecret of garbage: no error")
	}
}
