package wshub

import (
	"encoding/binary"
	"sync"

	"github.com/hitl-sh/hitl"
)

// frameCacheSize bounds the frame cache: about 1 KiB a question.
const frameCacheSize = 4096

// frameCache holds the hitl:question frames of pending interactions, so
// that the replay every WebSocket starts with encodes each question once,
// not once per connection (ten thousand inboxes reconnecting after a
// restart replay the same questions). A pending interaction's question
// never changes; its frame is forgotten when it ends. Entries of
// interactions that ended unseen can linger, unused (only pending
// interactions are looked up), until the cache fills and is emptied.
type frameCache struct {
	enc Encoder
	mu  sync.Mutex
	m   map[string][]byte
}

// question returns in's hitl:question frame, encoding it on a miss.
func (fc *frameCache) question(in *hitl.Interaction) ([]byte, error) {
	fc.mu.Lock()
	f := fc.m[in.ID]
	fc.mu.Unlock()
	if f != nil {
		return f, nil
	}
	data, err := fc.enc.Question(in)
	if err != nil {
		return nil, err
	}
	f = appendFrame(nil, data)
	fc.put(in.ID, f)
	return f, nil
}

// put remembers the frame of a pending interaction.
func (fc *frameCache) put(id string, f []byte) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if fc.m == nil || len(fc.m) >= frameCacheSize {
		fc.m = make(map[string][]byte)
	}
	fc.m[id] = f
}

// forget drops the frame of an interaction that ended.
func (fc *frameCache) forget(id string) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	delete(fc.m, id)
}

// observe keeps the cache in step with an event: a new question's frame
// is remembered, a changed or ended one's forgotten.
func (fc *frameCache) observe(ev *hitl.Event, frame []byte) {
	switch ev.Type {
	case hitl.EventCreated:
		if frame != nil && ev.Interaction != nil && ev.Interaction.Status == hitl.StatusPending {
			fc.put(ev.InteractionID, frame)
		}
	case hitl.EventAnswered, hitl.EventExpired, hitl.EventCancelled:
		fc.forget(ev.InteractionID)
	default:
		// Any other change (a vote, a claim) may leave the frame showing
		// the question as it was: render it again when it is next needed.
		fc.forget(ev.InteractionID)
	}
}

// appendFrame appends data to dst as one unmasked WebSocket text frame,
// as a server sends it.
func appendFrame(dst, data []byte) []byte {
	dst = appendFrameHeader(dst, len(data))
	return append(dst, data...)
}

// appendFrameHeader appends the header of an unmasked, final text frame
// of n bytes.
func appendFrameHeader(dst []byte, n int) []byte {
	const finText = 0x81
	switch {
	case n <= 125:
		return append(dst, finText, byte(n))
	case n <= 0xffff:
		return append(dst, finText, 126, byte(n>>8), byte(n))
	default:
		return binary.BigEndian.AppendUint64(append(dst, finText, 127), uint64(n))
	}
}

// Payload returns the payload of a frame the hub made (the JSON of a
// message, for Server-Sent Events).
func Payload(frame []byte) []byte {
	switch frame[1] & 0x7f {
	case 126:
		return frame[4:]
	case 127:
		return frame[10:]
	}
	return frame[2:]
}
