package standardwebhooks_test

import (
	"io"
	"net/http"

	"github.com/hitl-sh/hitl/standardwebhooks"
)

// A receiver checks each delivery's signature on the exact bytes it got,
// before it parses them, and answers 2xx only once it has kept the event
// (hitl retries anything else, with the same webhook-id).
func ExampleVerifier_Verify() {
	v, err := standardwebhooks.NewVerifier("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw") // hitl webhook secret
	if err != nil {
		panic(err)
	}
	http.HandleFunc("POST /hitl", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
		if err != nil {
			http.Error(w, "cannot read", http.StatusBadRequest)
			return
		}
		if err := v.Verify(r.Header, body); err != nil {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		// Use r.Header.Get("webhook-id") to drop a retry already handled,
		// then decode body: the interaction.
		w.WriteHeader(http.StatusNoContent)
	})
}
