package server

import (
	"context"
	"net/http"

	"github.com/go-jose/go-jose/v4"
	"github.com/hitl-sh/hitl"
)

// Receipts' routes:
//
//	GET  /.well-known/jwks.json           the public keys receipts verify with (public)
//	POST /api/v1/receipts/verify          check a receipt, for tools that cannot (public)
//	POST /api/v1/receipts/keys/rotate     make a new signing key (admins)

// jwksPath is where the receipts' public keys are published.
const jwksPath = "/.well-known/jwks.json"

// receiptVerifyPath verifies a receipt for a tool that cannot itself.
const receiptVerifyPath = "/api/v1/receipts/verify"

// Receipts signs and verifies the receipts of approved actions (the
// receipt package's *Service).
type Receipts interface {
	// KeySet returns the public keys receipts may be verified with.
	KeySet(ctx context.Context) (jose.JSONWebKeySet, error)
	// Verify checks a receipt against the keys and expect.
	Verify(ctx context.Context, token string, expect hitl.ReceiptExpectation) (hitl.ReceiptClaims, error)
	// Rotate makes a new signing key and returns its id (admins).
	Rotate(ctx context.Context) (string, error)
}

func (s *Server) receiptRoutes() {
	s.mux.HandleFunc("GET "+jwksPath, s.handle(s.handleJWKS))
	s.mux.HandleFunc("POST "+receiptVerifyPath, s.handle(s.handleVerifyReceipt))
	s.mux.HandleFunc("POST /api/v1/receipts/keys/rotate", s.handle(s.handleRotateReceiptKey))
}

func (s *Server) handleJWKS(w http.ResponseWriter, r *http.Request) error {
	set, err := s.receipts.KeySet(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, set)
	return nil
}

// verifyReceiptBody is POST /api/v1/receipts/verify's body: the receipt,
// and what it must stand for (each optional).
type verifyReceiptBody struct {
	Receipt string `json:"receipt"`
	hitl.ReceiptExpectation
}

// verifyReceiptResult is its answer: a receipt that does not verify is
// not an error of the request, so it is 200 with valid false and why.
type verifyReceiptResult struct {
	Valid  bool                `json:"valid"`
	Reason string              `json:"reason,omitempty"`
	Claims *hitl.ReceiptClaims `json:"claims,omitempty"`
}

func (s *Server) handleVerifyReceipt(w http.ResponseWriter, r *http.Request) error {
	var b verifyReceiptBody
	if err := decodeJSON(w, r, &b); err != nil {
		return err
	}
	c, err := s.receipts.Verify(r.Context(), b.Receipt, b.ReceiptExpectation)
	switch {
	case err == nil:
		writeJSON(w, http.StatusOK, verifyReceiptResult{Valid: true, Claims: &c})
	case hitl.ErrorCode(err) == hitl.EINVALID:
		out := verifyReceiptResult{Reason: hitl.ErrorMessage(err)}
		if c.InteractionID != "" { // signed, but not for this call
			out.Claims = &c
		}
		writeJSON(w, http.StatusOK, out)
	default:
		return err
	}
	return nil
}

func (s *Server) handleRotateReceiptKey(w http.ResponseWriter, r *http.Request) error {
	if c := hitl.CallerFrom(r.Context()); c.Role != hitl.RoleAdmin {
		return hitl.Errorf(hitl.EFORBIDDEN, "only admins may rotate the receipt key")
	}
	kid, err := s.receipts.Rotate(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]string{"kid": kid})
	return nil
}
