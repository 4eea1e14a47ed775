// Package trace carries a trace id: the name a client gives one operation
// (a command of the CLI, a file's open and the reads and writes of its
// blocks), which every call made for it carries to the namespace service
// (the request header's trace_id) and to the workers (gRPC metadata
// MetadataKey; the short-circuit request's trace_id), so that an operator
// follows the operation through the logs of each process it touched: the
// services log their slow calls with it, and the workers their slow bucket
// requests.
//
// It is not a tracer: no spans, no timings, no sampling, nothing sent
// anywhere but the logs. An id is a name, not a secret nor a key: any
// caller may send any id that passes Check, and two operations may share
// one.
package trace

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"sync/atomic"

	"google.golang.org/grpc/metadata"

	"github.com/stratafs/strata/internal/fserr"
)

// MetadataKey is the gRPC metadata that carries a call's trace id to a
// worker.
const MetadataKey = "strata-trace-id"

// MaxLen is the longest trace id a service takes.
const MaxLen = 64

// prefix is this process's: 8 random hex digits, so that ids of different
// processes differ, and a counter follows.
var (
	prefix  = newPrefix()
	counter atomic.Uint64
)

func newPrefix() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:]) + "-"
}

// New returns a new trace id, unique within the process and most likely
// across processes: "9f2c04ab-1a".
func New() string {
	return prefix + strconv.FormatUint(counter.Add(1), 36)
}

type key struct{}

// NewContext returns ctx carrying trace id id.
func NewContext(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, key{}, id)
}

// FromContext returns the trace id ctx carries, or "".
func FromContext(ctx context.Context) string {
	id, _ := ctx.Value(key{}).(string)
	return id
}

// Ensure returns ctx carrying a trace id, a new one if it carried none, and
// the id.
func Ensure(ctx context.Context) (context.Context, string) {
	if id := FromContext(ctx); id != "" {
		return ctx, id
	}
	id := New()
	return NewContext(ctx, id), id
}

// Check accepts "" (no id) or at most MaxLen letters, digits and ".-_:",
// which a log line shows as they are; a service refuses a call with any
// other (fserr.ErrInvalidArgument).
func Check(id string) error {
	if len(id) > MaxLen {
		return fserr.Errorf(fserr.ErrInvalidArgument, "trace id of %d bytes: at most %d", len(id), MaxLen)
	}
	for i := 0; i < len(id); i++ {
		if !allowed(id[i]) {
			return fserr.Errorf(fserr.ErrInvalidArgument, "trace id %q: only letters, digits and .-_: are allowed", id)
		}
	}
	return nil
}

func allowed(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '-' || c == '_' || c == ':'
}

// Incoming returns the trace id in a gRPC call's metadata, or "".
func Incoming(ctx context.Context) string {
	md, _ := metadata.FromIncomingContext(ctx)
	if v := md.Get(MetadataKey); len(v) > 0 {
		return v[0]
	}
	return ""
}

// Outgoing returns ctx with its trace id, if it carries one, in the
// metadata of the gRPC calls made with it.
func Outgoing(ctx context.Context) context.Context {
	if id := FromContext(ctx); id != "" {
		return metadata.AppendToOutgoingContext(ctx, MetadataKey, id)
	}
	return ctx
}
