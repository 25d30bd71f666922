package hitl

// IdempotencyKeyHeader is the HTTP header that carries an answer's
// idempotency key on the respond routes.
const IdempotencyKeyHeader = "Idempotency-Key"

// CheckAnswerKey checks the idempotency key an answer is sent with: ""
// (none), or up to MaxKeyLen bytes of printable ASCII, as an HTTP header
// value can carry it. Anything else is EINVALID.
func CheckAnswerKey(key string) error {
	if len(key) > MaxKeyLen {
		return Errorf(EINVALID, "Idempotency-Key is limited to %d bytes", MaxKeyLen)
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < 0x20 || c > 0x7e {
			return Errorf(EINVALID, "Idempotency-Key must be printable ASCII")
		}
	}
	return nil
}
