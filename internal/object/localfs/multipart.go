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
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/stratafs/strata/internal/object"
)

// Multipart uploads: the upload <id> is the directory
// .strata-tmp/uploads/<id>, holding the file "key" (the object's key; its
// mtime is the upload's start) and one file per part, named by its number.
// A part is written as a Put is (temp file, fsync, rename into the upload),
// so uploading it again replaces it whole. CompleteMultipart first renames
// the upload's directory away, which only one caller can do, then
// concatenates the parts into a temp file that it renames over the key.

// keyFile names the file of an upload that holds its key.
const keyFile = "key"

func (s *Store) uploadDir(id string) string {
	return filepath.Join(s.root, tmpDir, uploadsDir, id)
}

// CreateMultipart implements object.Store.
func (s *Store) CreateMultipart(ctx context.Context, key string) (object.Upload, error) {
	u, err := s.createMultipart(ctx, key)
	return u, object.WrapError(object.OpCreateMultipart, key, err)
}

func (s *Store) createMultipart(ctx context.Context, key string) (object.Upload, error) {
	if _, err := s.path(key); err != nil {
		return object.Upload{}, err
	}
	if err := object.ValidateUpload(key); err != nil {
		return object.Upload{}, err
	}
	if err := ctx.Err(); err != nil {
		return object.Upload{}, err
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	// The upload appears whole, key file included, or not at all.
	tmp, err := os.MkdirTemp(filepath.Join(s.root, tmpDir), "upload-*")
	if err != nil {
		return object.Upload{}, err
	}
	defer os.RemoveAll(tmp) // a no-op once renamed
	kf := filepath.Join(tmp, keyFile)
	if err := os.WriteFile(kf, []byte(key), 0o644); err != nil {
		return object.Upload{}, err
	}
	fi, err := os.Stat(kf)
	if err == nil {
		err = os.Chmod(tmp, 0o755)
	}
	if err == nil {
		err = os.Rename(tmp, s.uploadDir(id))
	}
	if err != nil {
		return object.Upload{}, err
	}
	return object.Upload{Key: key, ID: id, Started: fi.ModTime()}, nil
}

// checkUpload returns the directory of upload u, or ErrNotFound if there is
// no such upload of u.Key.
func (s *Store) checkUpload(u object.Upload) (string, error) {
	if _, err := hex.DecodeString(u.ID); err != nil || u.ID == "" {
		return "", noSuchUpload(u) // no id of ours, and no path to escape through
	}
	dir := s.uploadDir(u.ID)
	key, err := os.ReadFile(filepath.Join(dir, keyFile))
	if errors.Is(err, fs.ErrNotExist) || (err == nil && string(key) != u.Key) {
		return "", noSuchUpload(u)
	}
	return dir, err
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
	dir, err := s.checkUpload(u)
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return object.Part{}, err
	}
	f, err := s.writeTemp(body(ctx, r, size))
	if err != nil {
		return object.Part{}, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if err := os.Rename(f.Name(), filepath.Join(dir, strconv.Itoa(num))); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return object.Part{}, noSuchUpload(u) // aborted meanwhile
		}
		return object.Part{}, err
	}
	fi, err := f.Stat()
	if err != nil {
		return object.Part{}, err
	}
	return object.Part{Num: num, ETag: etag(fi), Size: size}, nil
}

// CompleteMultipart implements object.Store.
func (s *Store) CompleteMultipart(ctx context.Context, u object.Upload, parts []object.Part) (object.Info, error) {
	info, err := s.completeMultipart(ctx, u, parts)
	return info, object.WrapError(object.OpCompleteMultipart, u.Key, err)
}

func (s *Store) completeMultipart(ctx context.Context, u object.Upload, parts []object.Part) (object.Info, error) {
	p, err := s.path(u.Key)
	if err != nil {
		return object.Info{}, err
	}
	dir, err := s.checkUpload(u)
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return object.Info{}, err
	}
	// Claim the upload: a concurrent Complete, Abort or UploadPart now finds
	// none, and the parts checked are those concatenated.
	claimed := filepath.Join(s.root, tmpDir, "complete-"+u.ID)
	if err := os.Rename(dir, claimed); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return object.Info{}, noSuchUpload(u)
		}
		return object.Info{}, err
	}
	f, err := s.writeTemp(func(f *os.File) error {
		if err := checkParts(claimed, parts); err != nil {
			return err
		}
		return concat(ctx, f, claimed, parts)
	})
	if err != nil {
		_ = os.Rename(claimed, dir) // the upload goes on, as on S3
		return object.Info{}, err
	}
	defer os.RemoveAll(claimed)
	return s.publish(f, u.Key, p)
}

// checkParts checks parts against the upload's files, with S3's rules.
func checkParts(dir string, parts []object.Part) error {
	if len(parts) == 0 {
		return errors.New("no parts")
	}
	if !slices.IsSortedFunc(parts, func(a, b object.Part) int { return a.Num - b.Num }) {
		return errors.New("parts not in ascending order")
	}
	for i, p := range parts {
		fi, err := os.Lstat(filepath.Join(dir, strconv.Itoa(p.Num)))
		if err != nil || fi.Size() != p.Size || etag(fi) != p.ETag {
			return fmt.Errorf("part %d not uploaded as given", p.Num)
		}
		if i < len(parts)-1 && p.Size < object.MinPartSize {
			return fmt.Errorf("part %d smaller than %d bytes", p.Num, object.MinPartSize)
		}
	}
	return nil
}

// concat appends the parts' files in dir to f.
func concat(ctx context.Context, f *os.File, dir string, parts []object.Part) error {
	for _, p := range parts {
		if err := ctx.Err(); err != nil {
			return err
		}
		in, err := os.Open(filepath.Join(dir, strconv.Itoa(p.Num)))
		if err != nil {
			return err
		}
		_, err = f.ReadFrom(io.LimitReader(in, p.Size))
		in.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// AbortMultipart implements object.Store.
func (s *Store) AbortMultipart(ctx context.Context, u object.Upload) error {
	if err := ctx.Err(); err != nil {
		return object.WrapError(object.OpAbortMultipart, u.Key, err)
	}
	dir, err := s.checkUpload(u)
	if errors.Is(err, object.ErrNotFound) {
		return nil
	}
	if err == nil {
		err = os.RemoveAll(dir)
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
	entries, err := os.ReadDir(filepath.Join(s.root, tmpDir, uploadsDir))
	if err != nil {
		return nil, err
	}
	var out []object.Upload
	for _, e := range entries {
		kf := filepath.Join(s.uploadDir(e.Name()), keyFile)
		key, err := os.ReadFile(kf)
		fi, serr := os.Stat(kf)
		if err != nil || serr != nil {
			continue // being created, completed or aborted
		}
		if strings.HasPrefix(string(key), prefix) {
			out = append(out, object.Upload{Key: string(key), ID: e.Name(), Started: fi.ModTime()})
		}
	}
	slices.SortFunc(out, object.CompareUploads)
	return out, nil
}
