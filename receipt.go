package hitl

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"
)

// ChannelReceipt names the stored settings that hold the keys receipts
// are signed with (see NotificationStore.InitChannelSettings).
const ChannelReceipt = "receipt"

// DefaultReceiptTTL is how long a receipt is valid after the approval.
const DefaultReceiptTTL = time.Hour

// ReceiptClaims is what a receipt binds: one approved action, its
// arguments and who approved it, for a while. A receipt is a compact JWS
// (EdDSA, Ed25519) over these claims; see docs/receipts.md.
type ReceiptClaims struct {
	Issuer string `json:"iss"`
	// InteractionID is the action's interaction id (the JWT subject).
	InteractionID string `json:"sub"`
	Agent         string `json:"agent"`
	Kind          string `json:"kind,omitempty"`
	Name          string `json:"name"`
	// ArgsSHA256 is the hex SHA-256 of the canonical JSON of the approved
	// arguments (see ArgsSHA256): the edited ones for an edit.
	ArgsSHA256 string `json:"args_sha256"`
	// ApprovedBy is the person who approved, "rule:<id>" for a rule, or
	// "timeout" for a default response applied at the deadline.
	ApprovedBy string `json:"approved_by"`
	IssuedAt   int64  `json:"iat"` // Unix seconds: when it was approved
	Expiry     int64  `json:"exp"` // Unix seconds
}

// ReceiptIssuer signs the receipt of an approved action.
type ReceiptIssuer interface {
	// IssueReceipt returns the receipt of in, or "" when in is not an
	// approved action. The same interaction gives the same receipt
	// while the signing key stays the same.
	IssueReceipt(in *Interaction) (string, error)
}

// ReceiptExpectation is what a verifier checks a receipt against; empty
// fields are not checked. Args are the arguments about to be run.
type ReceiptExpectation struct {
	Args          json.RawMessage `json:"args,omitempty"`
	InteractionID string          `json:"interaction_id,omitempty"`
	Kind          string          `json:"kind,omitempty"`
	Name          string          `json:"name,omitempty"`
}

// ArgsSHA256 returns the hex SHA-256 of the canonical JSON of args (RFC
// 8785; see CanonicalJSON).
func ArgsSHA256(args json.RawMessage) (string, error) {
	c, err := CanonicalJSON(args)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(c)
	return hex.EncodeToString(sum[:]), nil
}

// ApprovedAction returns the claims a receipt of in binds, issuer and
// expiry left for the signer, and whether in is an approved action: an
// action answered approve or edit, by a person, a rule or its default
// response.
func (in *Interaction) ApprovedAction() (ReceiptClaims, bool) {
	if in == nil || in.Type != TypeAction || in.Status != StatusAnswered || in.Result == nil || in.Action == nil {
		return ReceiptClaims{}, false
	}
	var v actionValue
	if err := json.Unmarshal(in.Result.Value, &v); err != nil {
		return ReceiptClaims{}, false
	}
	args := in.Action.Args
	switch v.Decision {
	case DecisionApprove:
	case DecisionEdit:
		args = v.Args
	default:
		return ReceiptClaims{}, false
	}
	sum, err := ArgsSHA256(args)
	if err != nil {
		return ReceiptClaims{}, false
	}
	by := in.Result.RespondedBy
	if in.Result.TimedOut || by == "" {
		by = ChannelTimeout
	}
	return ReceiptClaims{
		InteractionID: in.ID, Agent: in.SourceAgent, Kind: in.Action.Kind, Name: in.Action.Name,
		ArgsSHA256: sum, ApprovedBy: by, IssuedAt: in.Result.RespondedAt.Unix(),
	}, true
}

// Check reports why c, a receipt's verified claims, does not stand for
// the call expect describes at now: expired, another interaction, another
// tool, or other arguments. The error has code EINVALID and says which.
func (c ReceiptClaims) Check(expect ReceiptExpectation, now time.Time) error {
	if c.Expiry == 0 || now.Unix() >= c.Expiry {
		return Errorf(EINVALID, "receipt expired at %s", time.Unix(c.Expiry, 0).UTC().Format(time.RFC3339))
	}
	if c.IssuedAt > now.Add(time.Minute).Unix() {
		return Errorf(EINVALID, "receipt issued in the future, at %s", time.Unix(c.IssuedAt, 0).UTC().Format(time.RFC3339))
	}
	if expect.InteractionID != "" && expect.InteractionID != c.InteractionID {
		return Errorf(EINVALID, "receipt is for interaction %s, not %s", c.InteractionID, expect.InteractionID)
	}
	if expect.Name != "" && expect.Name != c.Name {
		return Errorf(EINVALID, "receipt is for tool %q, not %q", c.Name, expect.Name)
	}
	if expect.Kind != "" && expect.Kind != c.Kind {
		return Errorf(EINVALID, "receipt is for kind %q, not %q", c.Kind, expect.Kind)
	}
	if len(expect.Args) > 0 {
		sum, err := ArgsSHA256(expect.Args)
		if err != nil {
			return Errorf(EINVALID, "args are not valid JSON")
		}
		if sum != c.ArgsSHA256 {
			return Errorf(EINVALID, "receipt was issued for other args (SHA-256 %s, these are %s)", c.ArgsSHA256, sum)
		}
	}
	return nil
}
