package lincheck

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/fserr"
)

// Dir and File are where a group's slots live; Root is the group's
// directory, which must exist before the first operation.
func Dir(group, slot int) string  { return fmt.Sprintf("/g%d/d%d", group, slot) }
func File(group, slot int) string { return fmt.Sprintf("/g%d/f%d", group, slot) }
func Root(group int) string       { return fmt.Sprintf("/g%d", group) }

// Random returns a random operation on group, on its files too if files.
// Publish's value is seq, which must be unique in the history (and
// positive).
func Random(r *rand.Rand, group int, seq int64, files bool) Input {
	n := Publish
	if files {
		n = kinds
	}
	in := Input{Group: group, Kind: Kind(r.IntN(int(n))), A: r.IntN(Slots), Perm: uint32(r.IntN(0o1000))}
	in.B = (in.A + 1 + r.IntN(Slots-1)) % Slots
	if in.Kind == Publish {
		in.Value = seq
	}
	return in
}

// ErrContent is a file read back with other bytes than any client wrote.
var ErrContent = errors.New("lincheck: a file's content fails its checksum")

// Runner runs operations through a client, whose umask must be 0 (the
// model's mkdir makes a directory with the permission asked). A publish
// first writes its content to a file of the runner's own (Scratch, one per
// operation), which is not part of the model.
type Runner struct {
	C       *client.Client
	Scratch string // a directory of the runner's own, which must exist
	Size    int    // the content's length, at least 20 bytes
}

// Do runs in and returns its answer. Unknown answers are failures to get
// one; err is an answer the model cannot predict (the test's failure),
// ErrContent among them.
func (r *Runner) Do(ctx context.Context, in Input) (out Output, err error) {
	dir := Dir(in.Group, in.A)
	c := r.C
	switch in.Kind {
	case Mkdir:
		out.OK, err = c.Mkdir(ctx, dir, in.Perm)
	case Chmod:
		err = c.SetPermission(ctx, dir, in.Perm)
		out.OK = err == nil
	case Rename:
		err = c.Rename2(ctx, dir, Dir(in.Group, in.B), false)
		out.OK = err == nil
	case Delete:
		out.OK, err = c.Delete(ctx, dir, false)
	case Stat:
		var st *client.FileStatus
		if st, err = c.Stat(ctx, dir); err == nil {
			out.Perm = int(st.Perm & 0o777)
		} else {
			out.Perm = -1
		}
	case Publish:
		out.OK, err = true, c.Rename2(ctx, r.scratch(in), File(in.Group, in.A), true)
	case Read:
		out.Value, err = r.read(ctx, File(in.Group, in.A))
	}
	switch {
	case err == nil:
	case errors.Is(err, errAfterOpen):
		return Output{Unknown: true}, nil
	case errors.Is(err, fserr.ErrNotFound) || errors.Is(err, fserr.ErrExists):
		out.OK = false // an answer: the model predicts it
		return out, nil
	case errors.Is(err, ErrContent) || IsAnswer(err):
		return out, fmt.Errorf("%v: %w", Model.DescribeOperation(in, out), err)
	default:
		return Output{Unknown: true}, nil
	}
	return out, nil
}

// Prepare writes a publish's content to its scratch file. An error means
// the publish is not to be run: nothing of it is visible in the model.
func (r *Runner) Prepare(ctx context.Context, in Input) error {
	w, err := r.C.Create(ctx, r.scratch(in), client.CreateOptions{Overwrite: true})
	if err != nil {
		return err
	}
	if _, err := w.Write(Content(in.Value, r.Size)); err != nil {
		w.Abort()
		return err
	}
	return w.Close()
}

func (r *Runner) scratch(in Input) string { return fmt.Sprintf("%s/v%d", r.Scratch, in.Value) }

// read returns the value in the file's content, -1 if there is no file.
func (r *Runner) read(ctx context.Context, path string) (int64, error) {
	f, err := r.C.Open(ctx, path)
	if errors.Is(err, fserr.ErrNotFound) {
		return -1, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		// NB: the read took effect at the open; a publish since may have
		// removed the file it opened, and its blocks with it.
		return 0, fmt.Errorf("%w: %v", errAfterOpen, err)
	}
	return Parse(data)
}

// errAfterOpen is a read that failed once it had opened the file: it
// observed nothing, as a read without an answer.
var errAfterOpen = errors.New("the read failed after its open")

// Content is the file content of value: the value, its length, bytes drawn
// from the value, and the CRC-32C of all that.
func Content(value int64, size int) []byte {
	b := make([]byte, max(size, 20))
	binary.LittleEndian.PutUint64(b, uint64(value))
	binary.LittleEndian.PutUint64(b[8:], uint64(len(b)))
	rng := rand.New(rand.NewPCG(uint64(value), 0x57a7a))
	for i := 16; i < len(b)-4; i++ {
		b[i] = byte(rng.Uint32())
	}
	binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.Checksum(b[:len(b)-4], castagnoli))
	return b
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Parse returns the value of a file's content, or ErrContent.
func Parse(b []byte) (int64, error) {
	if len(b) < 20 || binary.LittleEndian.Uint64(b[8:]) != uint64(len(b)) ||
		crc32.Checksum(b[:len(b)-4], castagnoli) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return 0, fmt.Errorf("%w (%d bytes)", ErrContent, len(b))
	}
	return int64(binary.LittleEndian.Uint64(b)), nil
}

// IsAnswer tells a file system's answer from a failure to get one.
func IsAnswer(err error) bool {
	var fe *fserr.Error
	return errors.As(err, &fe) && !errors.Is(err, fserr.ErrUnavailable) && !errors.Is(err, fserr.ErrNotLeader)
}
