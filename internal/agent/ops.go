package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/stratafs/strata/internal/client"
)

// request is every operation's fields; each reads those it names in ops.
type request struct {
	Op        string        `json:"op"`
	Path      string        `json:"path"`
	Dst       string        `json:"dst"`
	After     string        `json:"after"`
	H         uint64        `json:"h"`
	Off       int64         `json:"off"`
	Len       int64         `json:"len"`
	Shm       int64         `json:"shm"`
	Seq       bool          `json:"seq"`
	Perm      uint32        `json:"perm"`
	Parents   bool          `json:"parents"`
	Recursive bool          `json:"recursive"`
	Overwrite bool          `json:"overwrite"`
	Exact     bool          `json:"exact"`
	Sync      bool          `json:"sync"`
	Hard      bool          `json:"hard"`
	BlockSize uint64        `json:"block_size"`
	Mtime     int64         `json:"mtime"`
	Ranges    []rangeReq    `json:"ranges"`
	Bench     *benchRequest `json:"bench"`
}

// rangeReq is one range of a ranges request: len bytes of path at off,
// into the shared memory at shm.
type rangeReq struct {
	Path string `json:"path"`
	Off  int64  `json:"off"`
	Len  int64  `json:"len"`
	Shm  int64  `json:"shm"`
}

// answer is an operation's fields besides "ok".
type answer map[string]any

// op serves one operation for a session.
type op func(s *session, r *request) (answer, error)

// ops is the table of operations: every name a request may carry.
var ops map[string]op

func init() {
	ops = map[string]op{
		"stat":    (*session).stat,
		"list":    (*session).list,
		"mkdir":   (*session).mkdir,
		"delete":  (*session).delete,
		"rename":  (*session).rename,
		"summary": (*session).summary,
		"chmod":   (*session).chmod,
		"touch":   (*session).touch,
		"open":    (*session).open,
		"read":    (*session).read,
		"ranges":  (*session).ranges,
		"create":  (*session).create,
		"append":  (*session).append,
		"write":   (*session).write,
		"flush":   (*session).flush,
		"close":   (*session).close,
		"abort":   (*session).abort,
		"put":     (*session).put,
		"bench":   (*session).bench,
		"lend":    (*session).lend,
		"user":    (*session).user,
	}
}

// session is one connection's state: its process and its shared memory.
type session struct {
	s    *Server
	pid  int32
	proc *proc
	sh   *shared
}

// run answers one request with its answer frame (and a descriptor, for an
// answer that carries one under fdKey).
func (s *session) run(r *request) reply {
	fn := ops[r.Op]
	if fn == nil {
		return reply{frame: errorFrame(fmt.Errorf("%w: no operation %q", errArg, r.Op))}
	}
	a, err := fn(s, r)
	if err != nil {
		return reply{frame: errorFrame(err)}
	}
	files, _ := a[fdKey].([]*os.File)
	delete(a, fdKey)
	return reply{frame: answerFrame(a), files: files}
}

// fdKey holds, in an answer, the files whose descriptors go with it.
const fdKey = "\x00fd"

func answerFrame(a answer) []byte {
	if a == nil {
		a = answer{}
	}
	a["ok"] = true
	body, err := json.Marshal(a)
	if err != nil {
		return errorFrame(err)
	}
	return appendFrame(nil, body)
}

func errorFrame(err error) []byte {
	body, _ := json.Marshal(map[string]any{"ok": false, "cond": condOf(err), "msg": err.Error()})
	return appendFrame(nil, body)
}

// ctx is the context of a call that ends with it: bounded by the
// process's life.
func (s *session) ctx() context.Context { return s.proc.ctx }

// status is a file's status on the wire.
type status struct {
	Path     string `json:"path"`
	Dir      bool   `json:"dir"`
	Size     uint64 `json:"size"`
	Perm     uint32 `json:"perm"`
	Owner    string `json:"owner"`
	Group    string `json:"group"`
	Mtime    int64  `json:"mtime"` // milliseconds since the epoch
	Atime    int64  `json:"atime"`
	Repl     uint32 `json:"repl,omitempty"`
	Bsize    uint64 `json:"bsize,omitempty"`
	Writing  bool   `json:"writing,omitempty"` // under construction
	Children uint64 `json:"children,omitempty"`
	Ino      uint64 `json:"ino"`
}

func statusOf(st *client.FileStatus) status {
	return status{Path: st.Path, Dir: st.IsDir, Size: st.Length, Perm: st.Perm, Owner: st.Owner, Group: st.Group,
		Mtime: st.ModTime.UnixMilli(), Atime: st.AccTime.UnixMilli(), Repl: st.Replication, Bsize: st.BlockSize,
		Writing: st.UnderConstruction, Children: st.Children, Ino: st.InodeID}
}

func (s *session) stat(r *request) (answer, error) {
	st, err := s.s.c.Stat(s.ctx(), r.Path)
	if err != nil {
		return nil, err
	}
	return answer{"status": statusOf(st)}, nil
}

// list answers one page of a directory's entries after r.After, and
// whether more follow; a file lists as itself.
func (s *session) list(r *request) (answer, error) {
	page, more, err := s.s.c.ListPage(s.ctx(), r.Path, r.After)
	if err != nil {
		return nil, err
	}
	entries := make([]status, len(page))
	for i, st := range page {
		entries[i] = statusOf(st)
	}
	return answer{"entries": entries, "more": more}, nil
}

func (s *session) mkdir(r *request) (answer, error) {
	perm := r.Perm
	if perm == 0 {
		perm = 0o777
	}
	mk := s.s.c.Mkdir
	if r.Parents {
		mk = s.s.c.Mkdirs
	}
	created, err := mk(s.ctx(), r.Path, perm)
	return answer{"created": created}, err
}

func (s *session) delete(r *request) (answer, error) {
	deleted, err := s.s.c.Delete(s.ctx(), r.Path, r.Recursive)
	return answer{"deleted": deleted}, err
}

// rename moves path to dst: into dst if it is a directory (mv), or, with
// exact, to dst itself, replacing a file there with overwrite.
func (s *session) rename(r *request) (answer, error) {
	if r.Exact {
		return answer{"path": r.Dst}, s.s.c.Rename2(s.ctx(), r.Path, r.Dst, r.Overwrite)
	}
	final, err := s.s.c.Rename(s.ctx(), r.Path, r.Dst)
	return answer{"path": final}, err
}

func (s *session) summary(r *request) (answer, error) {
	cs, err := s.s.c.ContentSummary(s.ctx(), r.Path)
	if err != nil {
		return nil, err
	}
	return answer{"length": cs.Length, "files": cs.FileCount, "dirs": cs.DirectoryCount,
		"consumed": cs.SpaceConsumed, "loaded_only": cs.LoadedOnly}, nil
}

func (s *session) chmod(r *request) (answer, error) {
	return nil, s.s.c.SetPermission(s.ctx(), r.Path, r.Perm&0o7777)
}

// touch sets path's modification time (r.Mtime, milliseconds; 0: now).
func (s *session) touch(r *request) (answer, error) {
	t := time.Now()
	if r.Mtime != 0 {
		t = time.UnixMilli(r.Mtime)
	}
	return nil, s.s.c.SetTimes(s.ctx(), r.Path, t, time.Time{})
}

func (s *session) user(*request) (answer, error) {
	return answer{"user": s.s.c.User()}, nil
}

// file returns this process's file h, which must be a reader if reader,
// else a writer.
func (s *session) file(h uint64, reader bool) (*file, error) {
	f, err := s.s.files.get(h, s.pid)
	switch {
	case err != nil:
		return nil, err
	case reader && f.r == nil:
		return nil, fmt.Errorf("%w: file %d is open for writing, not reading", errArg, h)
	case !reader && f.w == nil:
		return nil, fmt.Errorf("%w: file %d is open for reading, not writing", errArg, h)
	}
	return f, nil
}

func (s *session) close(r *request) (answer, error) {
	f, err := s.s.files.remove(r.H, s.pid)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.r != nil {
		return nil, f.r.Close()
	}
	return nil, f.w.Close()
}

func (s *session) abort(r *request) (answer, error) {
	f, err := s.s.files.remove(r.H, s.pid)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.w != nil {
		f.w.Abort()
	} else {
		f.r.Close()
	}
	return nil, nil
}
