package fusefs

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
)

// journal keeps the node table on local disk so that a successor serving
// the same kernel connection (after a crash, a kill or an upgrade) knows
// what the kernel's node ids name. It is a file of records, appended with
// one write(2) each, so that a process killed at any moment leaves whole
// records and at most a torn last one, which the reader drops. It is not
// fsynced: it must survive the process, not the host (a host that restarts
// has no mount left to serve).
//
// Record: op (1 byte: 'p' put, 'd' drop), node id (8), parent id (8),
// name length (2), name; integers big-endian. A put with parent 0 is an
// entry unlinked while the kernel still holds its node.
type journal struct {
	path    string
	f       *os.File
	records atomic.Int64
	log     *slog.Logger
	failed  atomic.Bool // a write failed: logged once, the journal is off
}

const recordHead = 1 + 8 + 8 + 2

// openJournal reads the journal at path, if any, and starts it afresh with
// what it held: the entries, by node id.
func openJournal(path string, log *slog.Logger) (*journal, map[uint64]key, error) {
	entries, err := readJournal(path)
	if err != nil {
		return nil, nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, nil, err
	}
	j := &journal{path: path, log: log}
	j.rewrite(entries)
	if j.f == nil {
		return nil, nil, fmt.Errorf("journal %s: cannot be written", path)
	}
	return j, entries, nil
}

func readJournal(path string) (map[uint64]key, error) {
	entries := map[uint64]key{}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return entries, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	var head [recordHead]byte
	for {
		if _, err := io.ReadFull(r, head[:]); err != nil {
			return entries, nil // the end, or a torn last record
		}
		id, parent := binary.BigEndian.Uint64(head[1:]), binary.BigEndian.Uint64(head[9:])
		name := make([]byte, binary.BigEndian.Uint16(head[17:]))
		if _, err := io.ReadFull(r, name); err != nil {
			return entries, nil
		}
		switch head[0] {
		case 'p':
			entries[id] = key{parent, string(name)}
		case 'd':
			delete(entries, id)
		default:
			return nil, fmt.Errorf("journal %s: a record of kind %q", path, head[0])
		}
	}
}

func (j *journal) put(id, parent uint64, name string) { j.append('p', id, parent, name) }

func (j *journal) drop(id uint64) { j.append('d', id, 0, "") }

func (j *journal) append(op byte, id, parent uint64, name string) {
	if j == nil || j.failed.Load() {
		return
	}
	b := make([]byte, recordHead+len(name))
	b[0] = op
	binary.BigEndian.PutUint64(b[1:], id)
	binary.BigEndian.PutUint64(b[9:], parent)
	binary.BigEndian.PutUint16(b[17:], uint16(len(name)))
	copy(b[recordHead:], name)
	if _, err := j.f.Write(b); err != nil {
		j.fail(err)
		return
	}
	j.records.Add(1)
}

// due reports whether the journal holds so many more records than the
// table's live nodes that it should be rewritten.
func (j *journal) due(live int) bool {
	return j != nil && !j.failed.Load() && j.records.Load() > int64(4*live+65536)
}

// rewrite replaces the journal with one put per entry: written to a new
// file, then renamed over the old one.
func (j *journal) rewrite(entries map[uint64]key) {
	tmp := j.path + ".new"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		j.fail(err)
		return
	}
	old := j.f
	j.f = f
	j.records.Store(0)
	for id, k := range entries {
		j.put(id, k.parent, k.name)
	}
	if err := os.Rename(tmp, j.path); err != nil {
		j.fail(err)
	}
	if old != nil {
		old.Close()
	}
}

func (j *journal) fail(err error) {
	if j.failed.CompareAndSwap(false, true) {
		j.log.Error("the node journal failed: a restarted mount will not know this one's files", "path", j.path, "err", err)
	}
}

func (j *journal) close() {
	if j != nil && j.f != nil {
		j.f.Close()
	}
}
