package client

import (
	"errors"
	"fmt"
	"net"
	"os"

	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/scproto"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// scPool holds idle connections to one worker's short-circuit socket.
type scPool struct {
	socket string
	idle   chan *net.UnixConn
	leases leases
}

func newSCPool(socket string) *scPool {
	return &scPool{socket: socket, idle: make(chan *net.UnixConn, 16)}
}

func (p *scPool) get() (*net.UnixConn, error) {
	select {
	case c := <-p.idle:
		return c, nil
	default:
	}
	return net.DialUnix("unix", nil, &net.UnixAddr{Name: p.socket, Net: "unix"})
}

func (p *scPool) put(c *net.UnixConn) {
	select {
	case p.idle <- c:
	default:
		c.Close()
	}
}

func (p *scPool) close() {
	p.leases.close()
	for {
		select {
		case c := <-p.idle:
			c.Close()
		default:
			return
		}
	}
}

// maxCorruptPages is how many corrupt pages one short-circuit read has the
// worker drop and fetch again before it leaves the range to the worker's
// RPC (which checks and refetches on its own).
const maxCorruptPages = 3

// shortCircuitRead fills buf from [off, off+len(buf)) of the block by
// reading the worker's cache file itself: by the block's lease if one
// covers the range, else by a new one the worker grants (after making the
// range cached). Every page read is checked against its CRC; a page that
// fails ends the lease and is reported so that the worker drops it and
// fetches it again, and the read starts over by a new lease.
func shortCircuitRead(p *scPool, ref *pb.BlockRef, buf []byte, off int64, random bool, traceID string) error {
	k, n := keyOf(ref), int64(len(buf))
	l, fresh := p.leases.get(k, off, n), false
	for corrupt := 0; ; {
		if l == nil {
			var err error
			if l, err = p.lend(ref, off, n, false, random, traceID); err != nil {
				return err
			}
			fresh = true
		}
		err := l.readAt(buf, off)
		// NB: a new lease is shared only once it has served its first
		// read: installing it replaces (closes) the block's old lease, and
		// a concurrent reader that just got its own must not lose it so.
		switch {
		case err == nil && fresh:
			p.leases.add(k, l)
			return nil
		case err == nil:
			return nil
		case fresh:
			l.close()
		default:
			p.leases.drop(k, l)
		}
		l = nil
		var bad *corruptPageError
		switch {
		case errors.As(err, &bad) && corrupt < maxCorruptPages:
			corrupt++
			if err := p.invalidate(ref, bad.off, bad.n); err != nil {
				return err
			}
		case fresh:
			return err // the caller falls back to the worker's RPC
		}
		// An old lease's file may have been evicted (errUnlinked) or the
		// lease closed meanwhile: ask again.
	}
}

// warm asks the worker for a lease of the block's first n bytes, which
// has it fetch them and read on ahead, and keeps the lease unless the block
// has one covering them by then. It is a hint: a failure is the next
// read's to meet.
//
// NB: a lease of another range of the block (from an earlier pass) is
// replaced: kept, it would leave the reader to ask again at the block's
// start.
func (p *scPool) warm(ref *pb.BlockRef, n int64) {
	if l := p.leases.get(keyOf(ref), 0, n); l != nil && l.linked() == nil {
		return // cached and lent already
	}
	l, err := p.lend(ref, 0, n, false, false, "")
	if err == nil && !p.leases.addUnlessCovered(keyOf(ref), l, 0, n) {
		l.close()
	}
}

// invalidate has the worker drop the cached page [off, off+n) of the block,
// which failed its CRC here, and fetch it again.
func (p *scPool) invalidate(ref *pb.BlockRef, off, n int64) error {
	l, err := p.lend(ref, off, n, true, true, "")
	if err != nil {
		return err
	}
	l.close()
	return nil
}

// lend asks the worker for a lease covering [off, off+n) of the block,
// after dropping the pages of that range from its cache if invalidate;
// random says the reader reads here and there (no read-ahead for it);
// traceID names the reader's operation for the worker's logs.
func (p *scPool) lend(ref *pb.BlockRef, off, n int64, invalidate, random bool, traceID string) (*lease, error) {
	conn, err := p.get()
	if err != nil {
		return nil, err
	}
	req := &pb.ShortCircuitRequest{Block: ref, Offset: uint64(off), Length: uint64(n), Invalidate: invalidate, Random: random,
		Chunks: true, TraceId: traceID}
	resp := &pb.ShortCircuitResponse{}
	if err := scproto.Write(conn, req, nil); err != nil {
		conn.Close()
		return nil, err
	}
	fd, err := scproto.ReadFD(conn, resp)
	if err != nil {
		conn.Close()
		return nil, err
	}
	p.put(conn)
	if !resp.Ok || fd < 0 {
		closeFD(fd)
		if resp.Unavailable { // the bucket did not answer the worker
			return nil, fserr.Errorf(fserr.ErrUnavailable, "%s", resp.Error)
		}
		return nil, fmt.Errorf("short-circuit read refused: %s", resp.Error)
	}
	f := os.NewFile(uintptr(fd), "strata-cache")
	l, err := newLease(f, resp)
	if err == nil && !l.covers(off, n) {
		err = errors.New("short-circuit: the worker lent less than was asked")
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return l, nil
}

func closeFD(fd int) {
	if fd >= 0 {
		os.NewFile(uintptr(fd), "").Close()
	}
}
