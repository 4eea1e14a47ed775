// Package localfs is an object.Store kept in a local directory: the embedded
// default bucket of `strata server --dev`, cache mode's file:///dir, and a
// backend for single-host setups. Object "a/b/c" is the regular file
// <root>/a/b/c, so the directory can be inspected, and written, with
// ordinary tools: a file another program puts there is an object like any.
//
// Writes are atomic and durable, and never in place: a Put (Copy,
// CompleteMultipart) writes a temp file under <root>/.strata-tmp, fsyncs it,
// renames it over the key and fsyncs the directory. Keys under .strata-tmp
// are refused (ErrInvalidKey), and it never shows in listings. A Put of 1
// MiB or more writes past the page cache (O_DIRECT, direct.go), where the
// file system allows: the object is then read from the disk, not memory.
// Multipart uploads are directories of part files under .strata-tmp/uploads. The
// store makes .strata-tmp at its first write, not before: opening it, and
// reading and listing, write nothing into the directory (a cache-mode
// namespace over file:///dir leaves dir as it was until something is put).
//
// Directories. A marker "a/b/" is the directory <root>/a/b. The directories
// a Put creates for an object's parents are implied: they carry the extended
// attribute user.strata.implied, are no markers (Head("a/") fails, as on S3
// when only "a/x" exists), and a Delete that leaves one empty removes it
// (and so on up). Every other directory, made by a marker Put or by any
// other program, is a marker: only deleting the marker itself removes it,
// and only if it is empty (a marker deleted with children left becomes
// implied, as the children still imply it on S3). So block mode's
// blocks/<inode>/ go with their last block, while a directory a user made
// stays when its last file goes. These decisions are taken under an flock
// of the directory, so a marker Put and a Delete emptying the directory do
// not race. On a file system without user extended attributes every
// directory is a marker and no Delete removes one.
//
// ETags derive from the file's identity: device, inode, size, and mtime and
// ctime in nanoseconds; no content is hashed. Every write here makes a new
// inode, and another program rewriting a file in place changes its mtime
// and ctime, so the tag changes with the content (short of an in-place
// rewrite of the same size within one tick of the file system's clock); a
// chmod changes it too, needlessly. A marker's ETag is S3's for no content.
//
// Only regular files are objects, and only directories hold them. The
// store never follows a symbolic link, wherever it is in a key's path
// (beneath.go): a link is no object and no directory, so a link to a file
// reads as nothing, a link to a directory (even to one inside root) lists
// as nothing, and a key through one ("link/x") has no object and cannot be
// put. Nothing outside root is ever read, written, listed, renamed or
// removed, whatever links, loops or dangling names the directory holds.
// Listings leave out links, devices, names that are not UTF-8 and keys
// longer than object.MaxKeyLen, and say which (ListDirSkips). Unlike S3 it
// cannot hold both "a" and "a/b" (a file and a directory of one name): the
// second Put of such a pair fails.
package localfs

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/stratafs/strata/internal/object"
)

// tmpDir holds writes in flight. Being inside root keeps rename on one file
// system; the key rules forbid it as a first component so no object hides it.
const tmpDir = ".strata-tmp"

// uploadsDir, inside tmpDir, holds one directory per multipart upload.
const uploadsDir = "uploads"

// staleTemp is the age past which New removes leftover temp files: older than
// any write in flight, including those of other processes sharing the root.
const staleTemp = time.Hour

// markerETag is the ETag of every marker: S3's (the MD5) of no content.
const markerETag = "d41d8cd98f00b204e9800998ecf8427e"

// Store is an object store over a directory. Safe for concurrent use, also by
// several processes sharing the directory.
type Store struct {
	root string   // the directory's absolute path, for messages
	dir  *os.File // the directory, opened once: every path starts from it
	// noOpenat2 is set once openat2 answered ENOSYS: paths are walked then.
	noOpenat2 atomic.Bool
}

var _ object.Store = (*Store)(nil)

// errNoReplace: the file system cannot rename without replacing.
var errNoReplace = errors.New("rename without replacing not supported")

// New opens the store rooted at dir, creating dir if it is missing; it
// writes nothing inside it. NB: dir itself may be reached through links
// (its path is resolved once, here); nothing below it is.
func New(dir string) (*Store, error) {
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("localfs: %w", err)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("localfs: %w", err)
	}
	d, err := os.OpenFile(root, os.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, fmt.Errorf("localfs: %w", err)
	}
	s := &Store{root: root, dir: d}
	s.removeStaleTemps()
	return s, nil
}

// Root returns the store's directory.
func (s *Store) Root() string { return s.root }

// rel maps a key to its path below root (a marker to its directory's),
// refusing keys that could escape root.
func (s *Store) rel(key string) (string, error) {
	if err := object.ValidateKey(key); err != nil {
		return "", err
	}
	if key == tmpDir+"/" || strings.HasPrefix(key, tmpDir+"/") || key == tmpDir {
		return "", fmt.Errorf("%w: %q is reserved", object.ErrInvalidKey, tmpDir)
	}
	return strings.TrimSuffix(key, "/"), nil
}

// etag derives a file's ETag from its identity (see the package comment).
func etag(st *stat) string {
	var b [8 * 5]byte
	for i, v := range st.identity() {
		binary.LittleEndian.PutUint64(b[8*i:], v)
	}
	h := fnv.New64a()
	h.Write(b[:])
	return fmt.Sprintf("%016x", h.Sum64())
}

func fileInfo(key string, st *stat) object.Info {
	if object.IsMarker(key) {
		return object.Info{Key: key, ModTime: st.modTime(), ETag: markerETag}
	}
	return object.Info{Key: key, Size: st.size(), ModTime: st.modTime(), ETag: etag(st)}
}

// Head implements object.Store.
func (s *Store) Head(ctx context.Context, key string) (object.Info, error) {
	rel, err := s.rel(key)
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return object.Info{}, object.WrapError(object.OpHead, key, err)
	}
	if object.IsMarker(key) {
		info, err := s.headMarker(key, rel)
		return info, object.WrapError(object.OpHead, key, err)
	}
	st, err := s.lstat(rel)
	if err == nil && !st.isRegular() {
		err = object.ErrNotFound // a directory is a marker or a key prefix
	}
	if err != nil {
		return object.Info{}, object.WrapError(object.OpHead, key, translate(err))
	}
	return fileInfo(key, st), nil
}

// lstat returns the status of rel, of a link itself if it is one. NB: a
// bare descriptor of the directory (O_PATH where there is one), not an
// *os.File, which costs Head (the most frequent call) a quarter more.
func (s *Store) lstat(rel string) (*stat, error) {
	dir, name := split(rel)
	fd, err := s.openFd(dir, searchFlags|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	var st stat
	if err := retryEINTR(func() error { return unix.Fstatat(fd, name, &st.st, unix.AT_SYMLINK_NOFOLLOW) }); err != nil {
		return nil, &fs.PathError{Op: "fstatat", Path: s.name(rel), Err: err}
	}
	return &st, nil
}

// Get implements object.Store.
func (s *Store) Get(ctx context.Context, key string, off, length int64) (object.Reader, error) {
	return s.GetVersion(ctx, key, "", off, length)
}

// GetVersion implements object.Store: the version is checked on the open
// descriptor that the bytes are then read from, so a file renamed over the
// key meanwhile cannot mix in, and checked again at the end of the range.
func (s *Store) GetVersion(ctx context.Context, key, etag string, off, length int64) (object.Reader, error) {
	r, err := s.get(ctx, key, etag, off, length)
	if err != nil {
		return nil, object.WrapError(object.OpGet, key, err)
	}
	return r, nil
}

func (s *Store) get(ctx context.Context, key, etag string, off, length int64) (object.Reader, error) {
	rel, err := s.rel(key)
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return nil, err
	}
	if object.IsMarker(key) {
		return s.getMarker(key, rel, etag, off, length)
	}
	f, info, err := s.openObject(key, rel, etag)
	if err != nil {
		return nil, err
	}
	start, n, err := object.ClampRange(info.Size, off, length)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &reader{ctx: ctx, r: io.NewSectionReader(f, start, n), f: f, info: info}, nil
}

// openObject opens the object's file, checking that it is of version etag
// if that is not "". NB: O_NONBLOCK, so that a FIFO put in the directory
// does not block the open; it is no regular file, so it is then refused.
func (s *Store) openObject(key, rel, etag string) (*os.File, object.Info, error) {
	fd, err := s.openFd(rel, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, object.Info{}, missing(etag, translate(err))
	}
	var st stat
	err = retryEINTR(func() error { return unix.Fstat(fd, &st.st) })
	if err == nil && !st.isRegular() {
		err = missing(etag, object.ErrNotFound) // a directory is only a key prefix
	}
	if err == nil {
		err = unix.SetNonblock(fd, false)
	}
	if err != nil {
		unix.Close(fd)
		return nil, object.Info{}, err
	}
	info := fileInfo(key, &st)
	if etag != "" && info.ETag != etag {
		unix.Close(fd)
		return nil, object.Info{}, object.Changed(etag, info.ETag)
	}
	return os.NewFile(uintptr(fd), s.name(rel)), info, nil
}

// missing is err, for a key with no object, as a versioned read reports it.
func missing(etag string, err error) error {
	if etag != "" && errors.Is(err, object.ErrNotFound) {
		return fmt.Errorf("%w: %w", object.Changed(etag, ""), err)
	}
	return err
}

// reader stops a read when its context is done, as network readers do, and
// checks at the end that the file was not rewritten in place meanwhile.
type reader struct {
	ctx  context.Context
	r    io.Reader
	f    *os.File
	info object.Info
}

func (r *reader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := r.r.Read(p)
	if err == io.EOF {
		if st, serr := fstat(r.f); serr != nil || etag(st) != r.info.ETag {
			err = object.WrapError(object.OpGet, r.info.Key,
				fmt.Errorf("%w: the file was rewritten in place while being read", object.ErrChanged))
			r.r = errReader{err}
		}
	}
	return n, err
}

func (r *reader) Close() error      { return r.f.Close() }
func (r *reader) Info() object.Info { return r.info }

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// Delete implements object.Store. A Delete that leaves implied directories
// empty removes them (see the package comment).
func (s *Store) Delete(ctx context.Context, key string) error {
	rel, err := s.rel(key)
	if err == nil {
		err = ctx.Err()
	}
	if err == nil {
		if object.IsMarker(key) {
			err = s.deleteMarker(rel)
		} else {
			err = s.deleteFile(rel)
		}
	}
	return object.WrapError(object.OpDelete, key, err)
}

// deleteFile removes the object at rel: a regular file, and nothing else
// (a link there is no object, and stays).
func (s *Store) deleteFile(rel string) error {
	dir, name := split(rel)
	d, err := s.openDir(dir)
	if gone(err) {
		return nil
	}
	if err != nil {
		return err
	}
	defer d.Close()
	st, err := lstatAt(d, name)
	if err != nil || !st.isRegular() { // missing, or no object
		if err == nil || gone(err) {
			return nil
		}
		return err
	}
	if err := unlinkAt(d, name, 0); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return s.prune(dir)
}

// translate maps "no such file" to object.ErrNotFound, keeping the cause.
// ENOTDIR means a key's parent is an object, and ELOOP that a link is on
// its path: the key does not exist either.
func translate(err error) error {
	if gone(err) {
		return fmt.Errorf("%w: %w", object.ErrNotFound, err)
	}
	return err
}
