package object

import (
	"context"
	"io"
)

// Streamer is an optional ability of a Store: a Put whose body is written
// as it is produced, holding nothing but the store's own file while its
// writer waits for more (localfs: a temp file in the bucket's directory).
// A worker streams each block into such a store as the block's bytes
// arrive, so that writing the bucket overlaps receiving the block, and the
// upload that is left at the block's end is the fsync and the rename.
//
// Streams reports whether StartPut may be used: wrappers implement it by
// forwarding from the store they wrap, where they add nothing a stream
// would need (retry: a local write is not retried, and a slow body is its
// writer's pace, not a stalled store); the others (throttle, faulty) do not
// implement it, and their callers Put whole bodies.
type Streamer interface {
	Streams() bool
	// StartPut begins a Put of key whose body is written to the stream.
	StartPut(ctx context.Context, key string) (PutStream, error)
}

// PutStream is a Put under way. Write appends to the body. Commit stores
// the body under the key with Put's contract (atomically: the old object or
// the whole new one; durable once it returns) and returns the object's Info;
// Abort drops the body, storing nothing. Either ends the stream; Abort after
// Commit does nothing. Not safe for concurrent use.
type PutStream interface {
	io.Writer
	Commit(ctx context.Context) (Info, error)
	Abort()
}

// StartPut begins a streamed Put of key if s streams (see Streamer); ok is
// false, with no stream and no error, if it does not.
func StartPut(ctx context.Context, s Store, key string) (ps PutStream, ok bool, err error) {
	if !Streams(s) {
		return nil, false, nil
	}
	ps, err = s.(Streamer).StartPut(ctx, key)
	if err != nil {
		return nil, false, err
	}
	return ps, true, nil
}

// Streams reports whether s is a Streamer that streams; false for every
// other Store.
func Streams(s Store) bool {
	st, ok := s.(Streamer)
	return ok && st.Streams()
}
