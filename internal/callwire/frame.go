package callwire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// The prefaces that open a connection: its calls follow in plaintext, or a
// TLS handshake does.
const (
	PrefacePlain = "STRATA1P"
	PrefaceTLS   = "STRATA1T"
	prefaceLen   = len(PrefacePlain)
	prefaceStem  = "STRATA1"
)

// MaxMessage is the largest protobuf message Strata's gRPC services take or
// send, on either transport: the namespace service's gRPC server and
// callwire, its clients, and the Raft transport between members (an entry
// carries a request). One constant, so that a client never sends what a
// member refuses. The Java client's is Channels.MAX_INBOUND_MESSAGE_BYTES;
// testdata/frames.txt states both limits, and both languages' tests check
// theirs against it.
const MaxMessage = 64 << 20

// MaxFrame is the most bytes a frame holds after its length: MaxMessage,
// plus a request's method and timeout.
const MaxFrame = MaxMessage + 1<<10

// maxHello is the most bytes of a hello: a token is a few hundred.
const maxHello = 64 << 10

// The kinds of a response.
const (
	kindMessage = 0
	kindStatus  = 1
)

// errMalformed is the error of a frame that breaks the format.
var errMalformed = errors.New("callwire: malformed frame")

// readFrame reads one frame of at most limit bytes into buf, reallocated if
// too small, and returns its bytes after the length.
func readFrame(r io.Reader, buf []byte, limit int) ([]byte, error) {
	var h [4]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return nil, err
	}
	n := int(binary.BigEndian.Uint32(h[:]))
	if n > limit {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", errMalformed, n, limit)
	}
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, unexpected(err)
	}
	return buf, nil
}

// unexpected makes an end of input inside a frame the error it is.
func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// request is a decoded request frame; its fields alias the frame's bytes.
type request struct {
	method  string
	timeout uint64 // nanoseconds; 0: none
	message []byte
}

// parseRequest decodes the bytes of a request frame after its length.
func parseRequest(f []byte) (request, error) {
	if len(f) < 1 {
		return request{}, errMalformed
	}
	m := int(f[0])
	if m == 0 || len(f) < 1+m+8 {
		return request{}, errMalformed
	}
	return request{method: string(f[1 : 1+m]), timeout: binary.BigEndian.Uint64(f[1+m:]),
		message: f[1+m+8:]}, nil
}

// appendRequest appends the frame of a call of method, with timeout
// nanoseconds left (0: none), whose encoded request is msg.
func appendRequest(b []byte, method string, timeout uint64, msg []byte) []byte {
	return endFrame(append(startRequest(b, method, timeout), msg...))
}

// startRequest appends a request frame's header, of a call of method with
// timeout nanoseconds left (0: none), its length left to endFrame once the
// encoded request is appended.
func startRequest(b []byte, method string, timeout uint64) []byte {
	b = append(b, 0, 0, 0, 0, byte(len(method)))
	b = append(b, method...)
	return binary.BigEndian.AppendUint64(b, timeout)
}

// startResponse appends a response frame's header of kind, its length left
// to endFrame once the body is appended.
func startResponse(b []byte, kind byte) []byte {
	return append(b, 0, 0, 0, 0, kind)
}

// endFrame sets the length of the frame that starts at b[0].
func endFrame(b []byte) []byte {
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// parseResponse decodes the bytes of a response frame after its length.
func parseResponse(f []byte) (kind byte, body []byte, err error) {
	if len(f) < 1 || f[0] > kindStatus {
		return 0, nil, errMalformed
	}
	return f[0], f[1:], nil
}
