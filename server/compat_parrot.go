package server

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/hitl-sh/hitl"
)

// The AI-Parrot HITL contract's respond route
// (docs/contracts/ai-parrot-hitl.md), on top of the same engine.

// hitlRespondRequest is the contract's POST /api/v1/agents/hitl/respond.
type hitlRespondRequest struct {
	InteractionID string          `json:"interaction_id"`
	Value         json.RawMessage `json:"value"`
	ResponseType  hitl.Type       `json:"response_type,omitempty"`
}

// handleHITLRespond answers through the AI-Parrot HITL contract: 200
// {"ok":true,"interaction_id"} only when the answer was recorded. As the
// contract says, an interaction that is unknown, already answered,
// expired or cancelled is 404; the error's code still says which
// (not_found, conflict, expired, cancelled), where the native route
// answers 404, 409, 410 and 410.
func (s *Server) handleHITLRespond(w http.ResponseWriter, r *http.Request) error {
	err := s.hitlRespond(w, r)
	switch hitl.ErrorCode(err) {
	case hitl.ECONFLICT, hitl.EEXPIRED, hitl.ECANCELLED:
		var body errorBody
		body.Error.Code, body.Error.Message = hitl.ErrorCode(err), hitl.ErrorMessage(err)
		writeJSON(w, http.StatusNotFound, body)
		return nil
	}
	return err
}

func (s *Server) hitlRespond(w http.ResponseWriter, r *http.Request) error {
	var req hitlRespondRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	if req.InteractionID == "" {
		return hitl.Errorf(hitl.EINVALID, "interaction_id is required")
	}
	if err := requireValue("value", req.Value); err != nil {
		return err
	}
	value := req.Value
	if req.ResponseType != "" {
		if !req.ResponseType.Valid() {
			return hitl.Errorf(hitl.EINVALID, "response_type must be one of approval, single_choice, multi_choice, form, free_text, action, handoff; got %q", req.ResponseType)
		}
		in, err := s.broker.Answerable(r.Context(), req.InteractionID)
		if err != nil {
			return err
		}
		// An interaction that is over is refused as such by Respond,
		// whatever the response_type.
		if in.Status == hitl.StatusPending {
			if value, err = asResponseType(in.Type, req.ResponseType, req.Value); err != nil {
				return err
			}
		}
	}
	ctx, _ := withChannel(r.Context(), hitl.ChannelWeb)
	if _, err := s.broker.RespondIdempotent(ctx, req.InteractionID, value, r.Header.Get(hitl.IdempotencyKeyHeader)); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "interaction_id": req.InteractionID})
	return nil
}

// asResponseType checks value, sent as response_type (the contract's
// optional override: how the client collected the answer), against an
// interaction of type typ, and returns what to answer it with. The
// answer is then validated as any answer to typ is (hitl.NormalizeAnswer).
//
//	interaction     response_type accepted, and the value it sends
//	approval        approval       as for approval: true/false (or yes/no, approve/reject, a label)
//	                single_choice  an option key or label, as a string
//	                free_text      a string: yes/no, approve/reject, an option key or label
//	single_choice   single_choice  as for single_choice: a key (or label)
//	                multi_choice   an array of exactly one key (or label)
//	                free_text      a string: a key or label
//	multi_choice    multi_choice   as for multi_choice: an array of keys (or labels)
//	                single_choice  one key (or label), as a string: that option alone
//	                free_text      a string: a key or label, or several separated by commas
//	form            form           as for form: an object valid against the schema
//	                free_text      a string holding that object as JSON
//	free_text       free_text      as for free_text: a string
//	handoff         handoff        as for handoff: the reply, a non-empty string
//	                free_text      the reply, as a string (a frontend that
//	                               collected it in a free_text input)
//
// Any other pair is refused with 422 and the reason: the value could not
// mean what the client meant (a yes/no is not free text, a form is not
// one of the options).
func asResponseType(typ, responseType hitl.Type, value json.RawMessage) (json.RawMessage, error) {
	if responseType == typ {
		return value, nil
	}
	refuse := func() (json.RawMessage, error) {
		return nil, hitl.Errorf(hitl.EVALUE, "response_type %s cannot answer a %s interaction; send response_type %s or leave it out", responseType, typ, typ)
	}
	var v any
	if err := json.Unmarshal(value, &v); err != nil {
		return nil, hitl.Errorf(hitl.EVALUE, "value is not valid JSON")
	}
	switch responseType {
	case hitl.TypeFreeText:
		if _, ok := v.(string); !ok {
			return nil, hitl.Errorf(hitl.EVALUE, "response_type free_text sends a string; got %s", jsonKind(v))
		}
		return value, nil // each type reads its own words from text
	case hitl.TypeSingleChoice:
		if typ != hitl.TypeApproval && typ != hitl.TypeMultiChoice {
			return refuse()
		}
		if _, ok := v.(string); !ok {
			return nil, hitl.Errorf(hitl.EVALUE, "response_type single_choice sends one option key (a string); got %s", jsonKind(v))
		}
		if typ == hitl.TypeMultiChoice {
			// That option alone: never split at commas.
			var buf bytes.Buffer
			buf.WriteByte('[')
			buf.Write(bytes.TrimSpace(value))
			buf.WriteByte(']')
			return buf.Bytes(), nil
		}
		return value, nil
	case hitl.TypeMultiChoice:
		if typ != hitl.TypeSingleChoice {
			return refuse()
		}
		if a, ok := v.([]any); !ok || len(a) != 1 {
			return nil, hitl.Errorf(hitl.EVALUE, "a single_choice interaction takes one option: with response_type multi_choice, send an array of exactly one key")
		}
		return value, nil
	}
	return refuse()
}

// jsonKind names the JSON type of a decoded value, for error messages.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	}
	return "an object"
}
