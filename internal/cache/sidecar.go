package cache

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"

	"github.com/stratafs/strata/internal/cache/cachefs"
)

// The sidecar format; the package doc describes it.
const (
	metaMagic    = "SCMF"
	metaVersion  = 2  // what this code writes; it reads 1 too
	headerFixed  = 28 // header bytes before the key (24 in version 1, which has no chunk size)
	recordFixed  = 12 // record bytes before its CRCs
	recPresent   = 1
	recDropped   = 2
	recPinned    = 3  // the block is pinned (page index 1) or no longer (0)
	compactSlack = 32 // records a sidecar may hold beyond twice its live pages
)

// record is one sidecar log record.
type record struct {
	kind uint8
	idx  uint32   // page index
	n    uint32   // page length (recPresent)
	crcs []uint32 // the page's chunks' CRCs (recPresent)
}

// recordLen is the length of a record of a page of n bytes (0 for a drop)
// in a sidecar of chunk-byte chunks: at least one CRC field, so that a
// version 1 record (one CRC per page) is a version 2 record whose chunk is
// the page.
func recordLen(n uint32, chunk int64) int {
	return recordFixed + 4*max(1, int((int64(n)+chunk-1)/chunk)) + 4
}

func appendHeader(dst []byte, key string, pageSize, chunk, created int64) []byte {
	start := len(dst)
	dst = append(dst, metaMagic...)
	dst = binary.LittleEndian.AppendUint16(dst, metaVersion)
	dst = binary.LittleEndian.AppendUint16(dst, uint16(len(key)))
	dst = binary.LittleEndian.AppendUint64(dst, uint64(pageSize))
	dst = binary.LittleEndian.AppendUint64(dst, uint64(created))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(chunk))
	dst = append(dst, key...)
	return binary.LittleEndian.AppendUint32(dst, Checksum(dst[start:]))
}

func appendRecord(dst []byte, r record) []byte {
	start := len(dst)
	dst = append(dst, r.kind, 0, 0, 0)
	dst = binary.LittleEndian.AppendUint32(dst, r.idx)
	dst = binary.LittleEndian.AppendUint32(dst, r.n)
	if len(r.crcs) == 0 {
		dst = binary.LittleEndian.AppendUint32(dst, 0) // a drop's CRC field
	}
	for _, crc := range r.crcs {
		dst = binary.LittleEndian.AppendUint32(dst, crc)
	}
	return binary.LittleEndian.AppendUint32(dst, Checksum(dst[start:]))
}

// sidecar is a decoded sidecar.
type sidecar struct {
	key      string
	pageSize int64
	chunk    int64 // bytes per CRC; the page size in version 1
	created  int64
	pages    []page // replayed: absent or present
	records  int    // valid records
	validLen int64  // bytes of header and valid records
	torn     bool   // bytes follow the valid records
	pinned   bool   // the last pin record pinned the block
}

var errBadSidecar = errors.New("cache: bad sidecar")

// decodeSidecar parses a sidecar of version 1 or 2. A bad header or a
// record that passes its CRC but makes no sense is an error; a record
// failing its CRC, or too long for what follows, ends the log (a torn
// append), and what follows is ignored.
func decodeSidecar(buf []byte) (*sidecar, error) {
	s, off, err := decodeHeader(buf)
	if err != nil {
		return nil, err
	}
	for off+recordFixed+8 <= len(buf) {
		n := binary.LittleEndian.Uint32(buf[off+8:])
		if buf[off] == recPresent && int64(n) > s.pageSize {
			break // garbage: no record claims more than a page
		}
		k := recordLen(n, s.chunk)
		if off+k > len(buf) {
			break
		}
		r := buf[off : off+k]
		if binary.LittleEndian.Uint32(r[k-4:]) != Checksum(r[:k-4]) {
			break
		}
		if err := s.apply(r[:k-4]); err != nil {
			return nil, err
		}
		s.records++
		off += k
	}
	s.validLen, s.torn = int64(off), off < len(buf)
	return s, s.checkShape()
}

// decodeHeader parses a sidecar's header and returns the offset of its
// first record.
func decodeHeader(buf []byte) (*sidecar, int, error) {
	if len(buf) < 24+4 || string(buf[:4]) != metaMagic {
		return nil, 0, fmt.Errorf("%w: no header", errBadSidecar)
	}
	fixed := headerFixed
	switch v := binary.LittleEndian.Uint16(buf[4:]); v {
	case 1:
		fixed = 24
	case metaVersion:
	default:
		return nil, 0, fmt.Errorf("%w: version %d", errBadSidecar, v)
	}
	hlen := fixed + int(binary.LittleEndian.Uint16(buf[6:]))
	if len(buf) < hlen+4 || binary.LittleEndian.Uint32(buf[hlen:]) != Checksum(buf[:hlen]) {
		return nil, 0, fmt.Errorf("%w: header checksum", errBadSidecar)
	}
	s := &sidecar{
		key:      string(buf[fixed:hlen]),
		pageSize: int64(binary.LittleEndian.Uint64(buf[8:])),
		created:  int64(binary.LittleEndian.Uint64(buf[16:])),
	}
	s.chunk = s.pageSize
	if fixed == headerFixed {
		s.chunk = int64(binary.LittleEndian.Uint32(buf[24:]))
	}
	if validateKey(s.key) != nil || s.pageSize <= 0 || s.pageSize > 1<<30 || s.chunk <= 0 || s.pageSize%s.chunk != 0 {
		return nil, 0, fmt.Errorf("%w: key, page size or chunk size", errBadSidecar)
	}
	return s, hlen + 4, nil
}

// apply replays one record that passed its CRC (without that CRC).
func (s *sidecar) apply(r []byte) error {
	kind, idx := r[0], binary.LittleEndian.Uint32(r[4:])
	n := binary.LittleEndian.Uint32(r[8:])
	if r[1]|r[2]|r[3] != 0 || idx >= maxPages {
		return fmt.Errorf("%w: record for page %d", errBadSidecar, idx)
	}
	switch kind {
	case recPresent:
		if n == 0 || int64(n) > s.pageSize {
			return fmt.Errorf("%w: page %d of %d bytes", errBadSidecar, idx, n)
		}
		for int(idx) >= len(s.pages) {
			s.pages = append(s.pages, page{})
		}
		crcs := make([]uint32, (len(r)-recordFixed)/4)
		for i := range crcs {
			crcs[i] = binary.LittleEndian.Uint32(r[recordFixed+4*i:])
		}
		s.pages[idx] = page{crcs: crcs, n: n, state: present}
	case recDropped:
		if int(idx) < len(s.pages) {
			s.pages[idx] = page{}
		}
	case recPinned:
		if n != 0 || idx > 1 {
			return fmt.Errorf("%w: a pin record of %d, %d", errBadSidecar, idx, n)
		}
		s.pinned = idx == 1
	default:
		return fmt.Errorf("%w: record kind %d", errBadSidecar, kind)
	}
	return nil
}

// checkShape enforces the block shape invariant: only the last page may be
// short.
func (s *sidecar) checkShape() error {
	short := false
	for i, pg := range s.pages {
		if pg.state != present {
			continue
		}
		if short {
			return fmt.Errorf("%w: page %d follows a short page", errBadSidecar, i)
		}
		short = int64(pg.n) < s.pageSize
	}
	return nil
}

// persist appends b's pending records to its sidecar, after making the data
// they claim durable (unless Config.NoSync), so that the sidecar never
// claims data that is not on disk. data, if not nil, is b's data file open
// for writing. Records that could not be written stay pending for the next
// call. Callers hold a write on b (beginWriteLocked).
func (c *Cache) persist(b *block, data cachefs.File) error {
	b.persist.Lock()
	defer b.persist.Unlock()
	c.mu.Lock()
	recs := b.mu.pending
	b.mu.pending = nil
	var all []record // the whole log, when it is time to compact it
	if !b.mu.removed && len(recs) > 0 && b.persist.records+len(recs) > 2*b.mu.npresent+compactSlack {
		all = presentRecordsLocked(b)
	}
	removed := b.mu.removed
	c.mu.Unlock()
	if removed || len(recs) == 0 {
		return nil
	}
	err := c.writeRecords(b, recs, all, data)
	if err != nil {
		c.mu.Lock()
		b.mu.pending = append(recs, b.mu.pending...)
		c.mu.Unlock()
	}
	return err
}

func presentRecordsLocked(b *block) []record {
	recs := make([]record, 0, b.mu.npresent+1)
	for i, pg := range b.mu.pages {
		if pg.state == present {
			recs = append(recs, record{kind: recPresent, idx: uint32(i), n: pg.n, crcs: pg.crcs})
		}
	}
	if b.mu.pinned {
		recs = append(recs, record{kind: recPinned, idx: 1})
	}
	return recs
}

// writeRecords writes recs to b's sidecar, or replaces the sidecar with the
// log all if there is one. The caller holds b.persist.
func (c *Cache) writeRecords(b *block, recs, all []record, data cachefs.File) error {
	if !c.cfg.NoSync && claimsData(recs) {
		if err := c.syncData(b, data); err != nil {
			return err
		}
	}
	if all != nil {
		n, err := c.writeSidecar(b, all)
		if err == nil {
			b.persist.metaLen, b.persist.records = n, len(all)
		}
		return err
	}
	var buf []byte
	flag := os.O_WRONLY
	if b.persist.metaLen == 0 {
		buf = appendHeader(buf, b.key, b.ps, b.chunk, b.created)
		flag |= os.O_CREATE | os.O_TRUNC
	}
	for _, r := range recs {
		buf = appendRecord(buf, r)
	}
	f, err := c.fs.OpenFile(b.metaPath(), flag, fileMode)
	if err != nil {
		return err
	}
	_, err = f.WriteAt(buf, b.persist.metaLen)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		b.persist.metaLen += int64(len(buf))
		b.persist.records += len(recs)
	}
	return err
}

func claimsData(recs []record) bool {
	for _, r := range recs {
		if r.kind == recPresent {
			return true
		}
	}
	return false
}

func (c *Cache) syncData(b *block, data cachefs.File) error {
	if data != nil {
		return data.Sync()
	}
	f, err := c.fs.OpenFile(b.dataPath(), os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeSidecar replaces b's sidecar with a header and recs: it writes a
// temporary file, syncs it (unless NoSync) and renames it over the sidecar,
// so a crash leaves the old log or the new one. It returns the new size.
func (c *Cache) writeSidecar(b *block, recs []record) (int64, error) {
	buf := appendHeader(nil, b.key, b.ps, b.chunk, b.created)
	for _, r := range recs {
		buf = appendRecord(buf, r)
	}
	tmp := b.metaPath() + ".tmp"
	f, err := c.fs.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, fileMode)
	if err != nil {
		return 0, err
	}
	_, err = f.WriteAt(buf, 0)
	if err == nil && !c.cfg.NoSync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = c.fs.Rename(tmp, b.metaPath())
	}
	if err != nil {
		_ = c.fs.Remove(tmp)
		return 0, err
	}
	return int64(len(buf)), nil
}
