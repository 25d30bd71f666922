package server

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// sseWriter writes Server-Sent Events straight to the response, each
// within sseWriteTimeout, and flushes them. A message's JSON is written
// as it is (the pending questions' from the frames every stream shares),
// never copied into a buffer of the stream's own.
type sseWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

// event sends the messages of one logged event; only the last carries its
// id (see handleEvents).
func (sw *sseWriter) event(msgs []streamMessage, id int64) error {
	for i, m := range msgs {
		if err := sw.send(m.typ, m.data, id, i == len(msgs)-1); err != nil {
			return err
		}
	}
	return nil
}

// send sends one event named typ with data (compact JSON: no raw
// newlines), and with id when withID.
func (sw *sseWriter) send(typ string, data []byte, id int64, withID bool) error {
	return sw.write(func(w io.Writer) error {
		if _, err := io.WriteString(w, "event: "+typ+"\ndata: "); err != nil {
			return err
		}
		if _, err := w.Write(data); err != nil {
			return err
		}
		_, err := io.WriteString(w, sseEnd(id, withID))
		return err
	})
}

// replayDone sends hitl:replay_done (see replayDone) with id seq.
func (sw *sseWriter) replayDone(seq int64, resumed bool, pending []byte) error {
	head, tail := replayDone(seq, resumed, pending)
	return sw.write(func(w io.Writer) error {
		for _, b := range [][]byte{[]byte("event: " + msgReplayDone + "\ndata: "), head, pending, tail, []byte(sseEnd(seq, true))} {
			if _, err := w.Write(b); err != nil {
				return err
			}
		}
		return nil
	})
}

// line sends one field or comment line (": …") as a block of its own.
func (sw *sseWriter) line(s string) error {
	return sw.write(func(w io.Writer) error {
		_, err := io.WriteString(w, s+"\n\n")
		return err
	})
}

// sseEnd ends an event's block, with its id when withID.
func sseEnd(id int64, withID bool) string {
	if !withID {
		return "\n\n"
	}
	return "\nid: " + strconv.FormatInt(id, 10) + "\n\n"
}

// write runs fn on the response within sseWriteTimeout, then flushes.
// The deadline is set before anything is written: a write larger than
// the response's buffer goes to the connection at once.
func (sw *sseWriter) write(fn func(io.Writer) error) error {
	if err := sw.rc.SetWriteDeadline(time.Now().Add(sseWriteTimeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return fmt.Errorf("%w: %v", errClientGone, err)
	}
	if err := fn(sw.w); err != nil {
		return fmt.Errorf("%w: %v", errClientGone, err)
	}
	if err := sw.rc.Flush(); err != nil {
		return fmt.Errorf("%w: %v", errClientGone, err)
	}
	return nil
}
