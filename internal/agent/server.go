package agent

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/stratafs/strata/internal/client"
)

// Server serves one Go client to the processes that connect to its socket.
type Server struct {
	c     *client.Client
	uid   uint32
	files files
	// helloWithin is how long a connection may stay open before its
	// hello: one that sends none (a stuck or stray caller) is closed then.
	helloWithin time.Duration
	mu          struct {
		sync.Mutex
		ln    net.Listener
		procs map[int32]*proc
		conns map[*net.UnixConn]struct{}
	}
}

// proc is a caller process: its open connections, and the context its
// files' calls run in, ended with its last connection.
type proc struct {
	conns  int
	ctx    context.Context
	cancel context.CancelFunc
}

// New returns a server of c, which it does not close.
func New(c *client.Client) *Server {
	s := &Server{c: c, uid: uint32(os.Getuid()), helloWithin: HelloWithin}
	s.files.m = map[uint64]*file{}
	// NB: handles start anywhere, so that one of an agent that was killed
	// and started again names no file of the new one.
	s.files.next = rand.Uint64() >> 16
	s.mu.procs = map[int32]*proc{}
	s.mu.conns = map[*net.UnixConn]struct{}{}
	return s
}

// Serve accepts connections on ln until Close; each is served on a
// goroutine of its own.
func (s *Server) Serve(ln *net.UnixListener) error {
	s.mu.Lock()
	s.mu.ln = ln
	s.mu.Unlock()
	for {
		c, err := ln.AcceptUnix()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		go s.serveConn(c)
	}
}

// Close stops accepting, closes every connection and every file.
func (s *Server) Close() {
	s.mu.Lock()
	if s.mu.ln != nil {
		s.mu.ln.Close()
	}
	for c := range s.mu.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.files.closeAll(func(*file) bool { return true })
}

// serveConn checks who is calling, takes the hello and its shared memory,
// then answers requests in order until the caller closes.
func (s *Server) serveConn(c *net.UnixConn) {
	defer c.Close()
	uid, pid, err := peerCred(c)
	if err != nil || uid != s.uid {
		slog.Warn("agent: refused a connection from another user", "uid", uid, "pid", pid, "err", err)
		return
	}
	_ = c.SetReadDeadline(time.Now().Add(s.helloWithin))
	sh, rest, err := s.hello(c)
	if err != nil {
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	defer sh.unmap()
	p := s.enter(pid, c)
	defer s.leave(pid, c)
	sess := &session{s: s, pid: pid, proc: p, sh: sh}
	sess.serve(bufio.NewReaderSize(io.MultiReader(&sliceReader{b: rest}, c), 64<<10), c)
}

// HelloWithin is how long a connection may stay open before its hello, as
// the service's ports give a connection until its first authenticated call
// (internal/connlimit).
const HelloWithin = 20 * time.Second

// inFlight bounds the requests of one connection read and not yet
// answered: the reads among them run at once.
const inFlight = 8

// serve answers the connection's requests in order until it ends. Reads
// run concurrently (a sequential reader asks for its next chunks ahead,
// each into its own part of the shared memory); every other request waits
// for the reads before it, so that it sees what they did.
func (sess *session) serve(r *bufio.Reader, c *net.UnixConn) {
	answers := make(chan chan reply, inFlight)
	written := make(chan struct{})
	go func() {
		defer close(written)
		writeAnswers(c, answers)
	}()
	var reads sync.WaitGroup
	var buf []byte
	for {
		frame, err := readFrame(r, buf)
		if err != nil {
			break
		}
		buf = frame
		ans := make(chan reply, 1)
		answers <- ans
		var req request
		if err := json.Unmarshal(frame, &req); err != nil {
			ans <- reply{frame: errorFrame(fmt.Errorf("%w: a request that is not JSON: %v", errArg, err))}
			continue
		}
		if req.Op == "read" {
			reads.Add(1)
			go func() {
				defer reads.Done()
				ans <- sess.run(&req)
			}()
			continue
		}
		reads.Wait()
		ans <- sess.run(&req)
	}
	close(answers)
	<-written
	reads.Wait()
}

// reply is an answer frame, and the files whose descriptors go with it
// (SCM_RIGHTS), which writeAnswers closes once sent.
type reply struct {
	frame []byte
	files []*os.File
}

// writeAnswers writes each answer, in order, as soon as it is ready (a
// caller may be waiting for it while the next is still being read). After
// a failed write it only drains them.
func writeAnswers(c *net.UnixConn, answers chan chan reply) {
	failed := false
	for ans := range answers {
		out := <-ans
		if !failed {
			failed = writeReply(c, out) != nil
			if failed {
				c.Close() // NB: the reading side then ends too
			}
		}
		for _, f := range out.files {
			f.Close()
		}
	}
}

func writeReply(c *net.UnixConn, out reply) error {
	if len(out.files) == 0 {
		_, err := c.Write(out.frame)
		return err
	}
	// NB: the files stay open until writeAnswers closes them, after the
	// write: their numbers cannot be reused meanwhile.
	fds := make([]int, len(out.files))
	for i, f := range out.files {
		fds[i] = int(f.Fd())
	}
	_, _, err := c.WriteMsgUnix(out.frame, syscall.UnixRights(fds...), nil)
	return err
}

// hello reads the first request and maps the shared memory it brings,
// answering it; on failure the answer says why and the connection ends.
func (s *Server) hello(c *net.UnixConn) (*shared, []byte, error) {
	frame, fd, rest, err := readHello(c)
	if err != nil {
		return nil, nil, err
	}
	var req struct {
		Op      string `json:"op"`
		Version int    `json:"version"`
	}
	var sh *shared
	switch err = json.Unmarshal(frame, &req); {
	case err != nil:
		err = fmt.Errorf("%w: the hello is not JSON: %v", errArg, err)
	case req.Op != "hello" || req.Version != Version:
		err = fmt.Errorf("%w: the first request must be hello, version %d (got %q, version %d)", errArg, Version, req.Op, req.Version)
	default:
		sh, err = mapShared(fd)
		fd = -1
		if err != nil {
			err = fmt.Errorf("%w: %v", errArg, err)
		}
	}
	closeFD(fd)
	var out []byte
	if err != nil {
		out = errorFrame(err)
	} else {
		out = answerFrame(map[string]any{"version": Version, "shm": len(sh.b)})
	}
	if _, werr := c.Write(out); werr != nil && err == nil {
		sh.unmap()
		err = werr
	}
	return sh, rest, err
}

// Version is the protocol's version, which the hello must name.
const Version = 1

// enter counts a connection of process pid.
func (s *Server) enter(pid int32, c *net.UnixConn) *proc {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mu.conns[c] = struct{}{}
	p := s.mu.procs[pid]
	if p == nil {
		ctx, cancel := context.WithCancel(context.Background())
		p = &proc{ctx: ctx, cancel: cancel}
		s.mu.procs[pid] = p
	}
	p.conns++
	return p
}

// leave uncounts a connection; the process's last one closes its files.
func (s *Server) leave(pid int32, c *net.UnixConn) {
	s.mu.Lock()
	delete(s.mu.conns, c)
	p := s.mu.procs[pid]
	p.conns--
	last := p.conns == 0
	if last {
		delete(s.mu.procs, pid)
	}
	s.mu.Unlock()
	if last {
		s.files.closeAll(func(f *file) bool { return f.pid == pid })
		p.cancel()
	}
}
