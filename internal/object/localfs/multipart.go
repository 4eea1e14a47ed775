package localfs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/stratafs/strata/internal/object"
)

// Multipart uploads: the upload <id> is the directory
// .strata-tmp/uploads/<id>, holding the file "key" (the object's key; its
// mtime is the upload's start) and one file per part, named by its number.
// A part is written as a Put is (temp file, fsync, rename into the upload),
// so uploading it again replaces it whole. CompleteMultipart first renames
// the upload's directory away, which only one caller can do, then
// concatenates the parts into a temp file that it renames over the key.
// Each part is checked against what UploadPart returned on the descriptor
// that is then read, so a part replaced meanwhile fails the Complete.

// keyFile names the file of an upload that holds its key.
const keyFile = "key"

// maxKeyFile bounds what is read of a key file: a key and more.
const maxKeyFile = object.MaxKeyLen + 1

// CreateMultipart implements object.Store.
func (s *Store) CreateMultipart(ctx context.Context, key string) (object.Upload, error) {
	u, err := s.createMultipart(ctx, key)
	return u, object.WrapError(object.OpCreateMultipart, key, err)
}

func (s *Store) createMultipart(ctx context.Context, key string) (object.Upload, error) {
	if _, err := s.rel(key); err != nil {
		return object.Upload{}, err
	}
	if err := object.ValidateUpload(key); err != nil {
		return object.Upload{}, err
	}
	if err := ctx.Err(); err != nil {
		return object.Upload{}, err
	}
	uploads, err := s.uploads()
	if err != nil {
		return object.Upload{}, err
	}
	defer uploads.Close()
	tmp, err := s.tmp()
	if err != nil {
		return object.Upload{}, err
	}
	defer tmp.Close()
	// The upload appears whole, key file included, or not at all.
	tname, st, err := newUploadDir(tmp, key)
	if err != nil {
		return object.Upload{}, err
	}
	defer removeTree(tmp, tname) // a no-op once renamed
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	if err := renameAt(tmp, tname, uploads, id); err != nil {
		return object.Upload{}, err
	}
	return object.Upload{Key: key, ID: id, Started: st.modTime()}, nil
}

// newUploadDir makes, in the temp directory tmp, the directory of an
// upload to key, with its key file, and returns its name and the key
// file's status (its mtime is the upload's start).
func newUploadDir(tmp *os.File, key string) (string, *stat, error) {
	d, name, err := mkdirTemp(tmp, "upload-")
	if err != nil {
		return "", nil, err
	}
	defer d.Close()
	st, err := writeKeyFile(d, key)
	if err == nil {
		err = d.Chmod(0o755)
	}
	if err != nil {
		_ = removeTree(tmp, name)
		return "", nil, err
	}
	return name, st, nil
}

// writeKeyFile writes the key file of the upload directory d.
func writeKeyFile(d *os.File, key string) (*stat, error) {
	f, err := openAt(d, keyFile, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.WriteString(key); err != nil {
		return nil, err
	}
	return fstat(f)
}

// readKeyFile returns the key of the upload directory d, and when the
// upload started.
func readKeyFile(d *os.File) (string, *stat, error) {
	f, st, err := openRegular(d, keyFile)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	key, err := io.ReadAll(io.LimitReader(f, maxKeyFile))
	return string(key), st, err
}

// openUpload opens the directory of upload u, or fails with ErrNotFound if
// there is no such upload of u.Key.
func (s *Store) openUpload(u object.Upload) (*os.File, error) {
	if _, err := hex.DecodeString(u.ID); err != nil || u.ID == "" {
		return nil, noSuchUpload(u) // no id of ours, and no path to escape through
	}
	d, err := s.openDir(tmpDir + "/" + uploadsDir + "/" + u.ID)
	if gone(err) {
		return nil, noSuchUpload(u)
	}
	if err != nil {
		return nil, err
	}
	key, _, err := readKeyFile(d)
	if gone(err) || (err == nil && key != u.Key) {
		err = noSuchUpload(u)
	}
	if err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

func noSuchUpload(u object.Upload) error {
	return fmt.Errorf("%w: no multipart upload %q", object.ErrNotFound, u.ID)
}

// UploadPart implements object.Store.
func (s *Store) UploadPart(ctx context.Context, u object.Upload, num int, r io.Reader, size int64) (object.Part, error) {
	p, err := s.uploadPart(ctx, u, num, r, size)
	return p, object.WrapError(object.OpUploadPart, u.Key, err)
}

func (s *Store) uploadPart(ctx context.Context, u object.Upload, num int, r io.Reader, size int64) (object.Part, error) {
	if err := object.ValidatePart(u.Key, num, size); err != nil {
		return object.Part{}, err
	}
	d, err := s.openUpload(u)
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return object.Part{}, err
	}
	defer d.Close()
	t, err := s.writeTemp(body(ctx, r, size))
	if err != nil {
		return object.Part{}, err
	}
	defer t.discard()
	// NB: into the directory opened above, wherever it is now: one that a
	// Complete claimed meanwhile takes the part, and the Complete refuses
	// a part that is not the one it was given; one aborted is gone.
	if err := renameAt(t.dir, t.name, d, strconv.Itoa(num)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return object.Part{}, noSuchUpload(u) // aborted meanwhile
		}
		return object.Part{}, err
	}
	st, err := fstat(t.f)
	if err != nil {
		return object.Part{}, err
	}
	return object.Part{Num: num, ETag: etag(st), Size: size}, nil
}

// CompleteMultipart implements object.Store.
func (s *Store) CompleteMultipart(ctx context.Context, u object.Upload, parts []object.Part) (object.Info, error) {
	info, err := s.completeMultipart(ctx, u, parts)
	return info, object.WrapError(object.OpCompleteMultipart, u.Key, err)
}

func (s *Store) completeMultipart(ctx context.Context, u object.Upload, parts []object.Part) (object.Info, error) {
	rel, err := s.rel(u.Key)
	if err != nil {
		return object.Info{}, err
	}
	if err := checkPartList(parts); err != nil {
		return object.Info{}, err
	}
	d, err := s.openUpload(u)
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return object.Info{}, err
	}
	defer d.Close()
	uploads, err := s.uploads()
	if err != nil {
		return object.Info{}, err
	}
	defer uploads.Close()
	t, err := s.claimAndConcat(ctx, u, uploads, d, parts)
	if err != nil {
		return object.Info{}, err
	}
	return s.publish(t, u.Key, rel)
}

// claimAndConcat claims the upload, whose directory d is open, and writes
// its parts into a temp file. Claimed, the upload is no longer found by a
// concurrent Complete, Abort or UploadPart; if the parts fail, it goes on,
// as on S3.
func (s *Store) claimAndConcat(ctx context.Context, u object.Upload, uploads, d *os.File, parts []object.Part) (*temp, error) {
	tmp, err := s.tmp()
	if err != nil {
		return nil, err
	}
	defer tmp.Close()
	claimed := "complete-" + u.ID
	if err := renameAt(uploads, u.ID, tmp, claimed); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, noSuchUpload(u)
		}
		return nil, err
	}
	t, err := s.writeTemp(func(f *os.File) error { return concat(ctx, f, d, parts) })
	if err != nil {
		_ = renameAt(tmp, claimed, uploads, u.ID) // the upload goes on
		return nil, err
	}
	_ = removeTree(tmp, claimed)
	return t, nil
}

// checkPartList checks the list of parts with S3's rules.
func checkPartList(parts []object.Part) error {
	if len(parts) == 0 {
		return errors.New("no parts")
	}
	if !slices.IsSortedFunc(parts, func(a, b object.Part) int { return a.Num - b.Num }) {
		return errors.New("parts not in ascending order")
	}
	for i, p := range parts {
		if i < len(parts)-1 && p.Size < object.MinPartSize {
			return fmt.Errorf("part %d smaller than %d bytes", p.Num, object.MinPartSize)
		}
	}
	return nil
}

// concat appends the parts' files in the upload directory d to f, each
// checked to be the part UploadPart returned.
func concat(ctx context.Context, f, d *os.File, parts []object.Part) error {
	for _, p := range parts {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := appendPart(f, d, p); err != nil {
			return err
		}
	}
	return nil
}

func appendPart(f, d *os.File, p object.Part) error {
	notAsGiven := fmt.Errorf("part %d not uploaded as given", p.Num)
	in, st, err := openRegular(d, strconv.Itoa(p.Num))
	if gone(err) {
		return notAsGiven
	}
	if err != nil {
		return err
	}
	defer in.Close()
	if st.size() != p.Size || etag(st) != p.ETag {
		return notAsGiven
	}
	_, err = f.ReadFrom(io.LimitReader(in, p.Size))
	return err
}

// AbortMultipart implements object.Store.
func (s *Store) AbortMultipart(ctx context.Context, u object.Upload) error {
	if err := ctx.Err(); err != nil {
		return object.WrapError(object.OpAbortMultipart, u.Key, err)
	}
	d, err := s.openUpload(u)
	if errors.Is(err, object.ErrNotFound) {
		return nil
	}
	if err == nil {
		d.Close()
		var uploads *os.File
		if uploads, err = s.uploads(); err == nil {
			err = removeTree(uploads, u.ID)
			uploads.Close()
		}
	}
	return object.WrapError(object.OpAbortMultipart, u.Key, err)
}

// ListUploads implements object.Store.
func (s *Store) ListUploads(ctx context.Context, prefix string) ([]object.Upload, error) {
	out, err := s.listUploads(ctx, prefix)
	return out, object.WrapError(object.OpListUploads, prefix, err)
}

func (s *Store) listUploads(ctx context.Context, prefix string) ([]object.Upload, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	uploads, err := s.openDir(tmpDir + "/" + uploadsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // nothing was ever uploaded here
	}
	if err != nil {
		return nil, err
	}
	defer uploads.Close()
	names, err := uploads.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	var out []object.Upload
	for _, id := range names {
		d, err := openAt(uploads, id, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		if err != nil {
			continue // being created, completed or aborted; or no upload
		}
		key, st, err := readKeyFile(d)
		d.Close()
		if err == nil && strings.HasPrefix(key, prefix) {
			out = append(out, object.Upload{Key: key, ID: id, Started: st.modTime()})
		}
	}
	slices.SortFunc(out, object.CompareUploads)
	return out, nil
}
