package namespace_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
	"github.com/stratafs/strata/internal/namespace"
)

var (
	flagSeed  = flag.Uint64("seed", 0, "run TestDifferential with this seed only")
	flagSteps = flag.Int("steps", 0, "steps per seed of TestDifferential (default 10000, 2000 with -short)")
)

// TestDifferential applies long random sequences of operations, over a
// small alphabet of names so that paths collide often, both to the
// namespace and to the naive model, and requires the same answers, the same
// tree, and a consistent keyspace throughout.
func TestDifferential(t *testing.T) {
	runDifferential(t, []uint64{1, 2, 3, 4, 5, 6, 7, 8}, nil)
}

// runDifferential runs TestDifferential's steps for each seed; through, if
// set, replaces the diff's mutations.
func runDifferential(t *testing.T, seeds []uint64, through func(d *diff) mutator) {
	if *flagSeed != 0 {
		seeds = []uint64{*flagSeed}
	}
	steps := 10000
	if testing.Short() {
		steps = 2000
	}
	if *flagSteps > 0 {
		steps = *flagSteps
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			d := newDiff(t, seed)
			if through != nil {
				d.mut = through(d)
			}
			for d.step = 1; d.step <= steps; d.step++ {
				d.now++
				d.randomOp()
				if d.step%50 == 0 {
					d.compareAll()
				}
			}
			d.step = steps
			d.drainPurge()
			d.compareAll()
			// No inode is left but the tree's and the 3 of namespace other.
			if s, err := readRaw(d.batch); err != nil || len(s.purge) != 0 || len(s.inodes) != len(d.m.nodes)+3 {
				d.fatalf("after purging: %v; %d inodes for %d paths", err, len(s.inodes), len(d.m.nodes))
			}
			t.Logf("ops: %v", d.stats)
		})
	}
}

// diff drives one random run.
type diff struct {
	t       *testing.T
	seed    uint64
	rng     *rand.Rand
	fs      *namespace.FS
	mut     mutator // the mutations: fs itself, or through the state machine's commands
	cfg     namespace.Config
	store   *kv.Mem
	batch   *kv.Overlay // commands applied since the last flush, as the server batches them
	m       *model
	now     int64
	step    int
	blockID uint64
	history []string
	stats   map[string]int // op and outcome → count, to see what a run covered
}

var (
	callers = []namespace.Caller{super, super, alice, bob}
	holders = []string{"h1", "h2", "h3"}
	names   = []string{"a", "b", "c"}
	perms   = []uint16{0o777, 0o777, 0o755, 0o750, 0o770, 0o700, 0o1777, 0o711, 0o555, 0o644, 0o666, 0o600, 0o7777}
	umasks  = []uint16{0, 0, 0o022, 0o027, 0o077, 0o222}
)

func newDiff(t *testing.T, seed uint64) *diff {
	cfg := namespace.Config{Superuser: "super", Supergroup: "supergroup", InlineLimit: 16}
	d := &diff{t: t, seed: seed, rng: rand.New(rand.NewPCG(seed, seed)), fs: namespace.New(cfg), cfg: cfg,
		store: kv.NewMem(), now: 1, stats: map[string]int{}}
	d.mut = d.fs
	d.batch = kv.NewOverlay(d.store)
	err := d.fs.CreateNamespace(d.batch, d.now, super, kvschema.Namespace{Name: dflt, Mode: 1})
	if err != nil {
		t.Fatal(err)
	}
	// A second namespace that no operation touches must stay as it is.
	if err := d.fs.CreateNamespace(d.batch, d.now, super, kvschema.Namespace{Name: "other", Mode: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.fs.Mkdirs(d.batch, d.now, super, "other", "/a/b", 0o777, 0, true); err != nil {
		t.Fatal(err)
	}
	d.m = newModel(cfg, d.now)
	if seed%2 == 0 { // let everyone work at the top level
		d.m.nodes["/"].perm = 0o777
		if err := d.fs.SetPermission(d.batch, super, dflt, "/", 0o777); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// apply runs a command on the batch after a mark, rolls it back on failure
// (as the server's apply does), and now and then flushes the batch to the
// store.
func (d *diff) apply(op func(tx kv.Txn) error) error {
	d.batch.Mark()
	err := op(d.batch)
	if err != nil {
		d.batch.Rollback()
	}
	if d.rng.IntN(4) == 0 {
		d.batch.ApplyTo(d.store)
		d.batch = kv.NewOverlay(d.store)
	}
	return err
}

// runModel runs op on a clone of the model, kept only on success.
func runModel[T any](d *diff, op func(m *model) (T, error)) (T, error) {
	c := d.m.clone()
	v, err := op(c)
	if err == nil {
		d.m = c
	}
	return v, err
}

// outcome compares what the namespace and the model answered: the error
// class, and when both succeeded, what mismatch reports about the results.
func (d *diff) outcome(desc string, got, want error, mismatch func() string) {
	gc, wc := errClass(got), modelClass(want)
	line := fmt.Sprintf("step %d: %s -> %s", d.step, desc, gc)
	d.history = append(d.history, line)
	d.stats[strings.Fields(desc)[1]+" "+gc]++
	if gc != wc {
		d.fatalf("%s\n  namespace: %v\n  model: %s", line, got, wc)
	}
	if got == nil && mismatch != nil {
		if msg := mismatch(); msg != "" {
			d.fatalf("%s: %s", line, msg)
		}
	}
}

func modelClass(err error) string {
	if err == nil {
		return "ok"
	}
	for _, s := range sentinels {
		if err == s.err {
			return s.name
		}
	}
	return "model(" + err.Error() + ")"
}

func (d *diff) fatalf(format string, args ...any) {
	d.t.Helper()
	tail := d.history[max(0, len(d.history)-40):]
	d.t.Fatalf("seed %d, step %d (rerun: go test ./internal/namespace -run 'TestDifferential/%d$' -seed %d -steps %d): %s\nhistory tail:\n  %s",
		d.seed, d.step, d.seed, d.seed, d.step, fmt.Sprintf(format, args...), strings.Join(tail, "\n  "))
}

func (d *diff) randomOp() {
	ops := []struct {
		weight int
		fn     func()
	}{
		{14, d.opMkdirs}, {14, d.opCreate}, {14, d.opComplete}, {8, d.opDelete}, {14, d.opRename},
		{4, d.opSetPermission}, {4, d.opSetOwner}, {3, d.opSetTimes}, {3, d.opRecoverLease},
		{2, d.opExpireLease}, {5, d.opPurge}, {12, d.opRead}, {2, d.opInvalid},
	}
	total := 0
	for _, o := range ops {
		total += o.weight
	}
	r := d.rng.IntN(total)
	for _, o := range ops {
		if r < o.weight {
			o.fn()
			return
		}
		r -= o.weight
	}
}

func (d *diff) caller() namespace.Caller { return callers[d.rng.IntN(len(callers))] }

func pick[T any](d *diff, xs []T) T { return xs[d.rng.IntN(len(xs))] }

// path returns an existing path (with probability pExisting%), the root
// now and then, or a random path of depth 1-4.
func (d *diff) path(pExisting int) string {
	switch r := d.rng.IntN(100); {
	case r < pExisting:
		return pick(d, d.modelPaths(func(*mnode) bool { return true }))
	case r < pExisting+3:
		return "/"
	}
	var b strings.Builder
	for range 1 + d.rng.IntN(3) + d.rng.IntN(2)*d.rng.IntN(2) {
		b.WriteString("/" + pick(d, names))
	}
	return b.String()
}

// file returns a file of the model: an open one with probability pOpen%;
// any path when there is none.
func (d *diff) file(pOpen int) string {
	open := d.rng.IntN(100) < pOpen
	files := d.modelPaths(func(n *mnode) bool { return !n.dir && (!open || n.holder != "") })
	if len(files) == 0 {
		return d.path(30)
	}
	return pick(d, files)
}

// modelPaths returns the model's paths whose node passes keep, sorted, so
// that a seed always picks the same.
func (d *diff) modelPaths(keep func(*mnode) bool) []string {
	var out []string
	for p, n := range d.m.nodes {
		if keep(n) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

func (d *diff) opMkdirs() {
	c, p, perm, umask, parents := d.caller(), d.path(30), pick(d, perms), pick(d, umasks), d.rng.IntN(3) > 0
	var got bool
	err := d.apply(func(tx kv.Txn) (err error) {
		got, err = d.mut.Mkdirs(tx, d.now, c, dflt, p, perm, umask, parents)
		return err
	})
	want, werr := runModel(d, func(m *model) (bool, error) { return m.mkdirs(c, d.now, p, perm, umask, parents) })
	d.outcome(fmt.Sprintf("%s mkdirs %s perm=%o umask=%o parents=%v", c.User, p, perm, umask, parents), err, werr,
		func() string { return diffValue("created", got, want) })
}

func (d *diff) opCreate() {
	c, p := d.caller(), d.path(15)
	if d.rng.IntN(4) == 0 {
		p = d.file(50)
	}
	o := namespace.CreateOptions{Perm: pick(d, perms), Umask: pick(d, umasks), Overwrite: d.rng.IntN(2) == 0,
		Parents: d.rng.IntN(2) == 0, Holder: pick(d, holders)}
	switch d.rng.IntN(6) {
	case 0, 1: // a whole small file in one command, now and then too big
		o.Closed, o.Data = true, make([]byte, d.rng.IntN(d.cfg.InlineLimit+2))
		for i := range o.Data {
			o.Data[i] = byte(d.rng.Uint32())
		}
	case 2: // content without Closed is malformed
		o.Data = []byte("x")
	}
	var got *kvschema.Inode
	err := d.apply(func(tx kv.Txn) (err error) {
		got, err = d.mut.Create(tx, d.now, c, dflt, p, o)
		return err
	})
	var ino uint64
	if got != nil {
		ino = got.ID
	}
	want, werr := runModel(d, func(m *model) (*mnode, error) { return m.create(c, d.now, p, o, ino) })
	d.outcome(fmt.Sprintf("%s create %s perm=%o umask=%o overwrite=%v parents=%v holder=%s closed=%v data=%d",
		c.User, p, o.Perm, o.Umask, o.Overwrite, o.Parents, o.Holder, o.Closed, len(o.Data)), err, werr,
		func() string { return compareNode(p, got, want, -1) })
}

func (d *diff) opComplete() {
	c, p := d.caller(), d.file(90)
	if d.rng.IntN(8) == 0 {
		p = d.path(50)
	}
	o := d.content()
	if n := d.m.nodes[p]; n != nil && !n.dir {
		o.Inode, o.Holder = n.ino, n.holder
	}
	switch d.rng.IntN(12) {
	case 0:
		o.Holder = pick(d, holders)
	case 1:
		o.Inode = d.rng.Uint64N(20)
	}
	err := d.apply(func(tx kv.Txn) error { return d.mut.Complete(tx, d.now, c, dflt, p, o) })
	_, werr := runModel(d, func(m *model) (struct{}, error) { return struct{}{}, m.complete(c, d.now, p, o) })
	d.outcome(fmt.Sprintf("%s complete %s ino=%d holder=%s len=%d inline=%v data=%d blocks=%v",
		c.User, p, o.Inode, o.Holder, o.Length, o.Inline, len(o.Data), o.Blocks), err, werr, nil)
}

// content returns what a writer might claim to have written, now and then
// malformed.
func (d *diff) content() namespace.CompleteOptions {
	var o namespace.CompleteOptions
	switch r := d.rng.IntN(10); {
	case r < 4:
		n := d.rng.IntN(d.cfg.InlineLimit + 1)
		if d.rng.IntN(8) == 0 {
			n = d.cfg.InlineLimit + 1
		}
		o.Inline, o.Data, o.Length = true, []byte(strings.Repeat("x", n)), uint64(n)
		if n > 0 && d.rng.IntN(10) == 0 {
			o.Length--
		}
	case r < 9:
		for range 1 + d.rng.IntN(3) {
			d.blockID++
			b := kvschema.Block{ID: d.blockID, Offset: o.Length, Length: 1 + d.rng.Uint64N(100)}
			o.Blocks, o.Length = append(o.Blocks, b), o.Length+b.Length
		}
		switch d.rng.IntN(16) {
		case 0:
			o.Length++
		case 1:
			o.Blocks[len(o.Blocks)-1].Offset++
		case 2:
			o.Blocks[0].Length = 0
		case 3:
			o.Data = []byte("x")
		}
	}
	return o
}

func (d *diff) opDelete() {
	c, p, recursive := d.caller(), d.path(60), d.rng.IntN(2) == 0
	var got bool
	err := d.apply(func(tx kv.Txn) (err error) {
		got, err = d.mut.Delete(tx, d.now, c, dflt, p, recursive)
		return err
	})
	want, werr := runModel(d, func(m *model) (bool, error) { return m.delete(c, d.now, p, recursive) })
	d.outcome(fmt.Sprintf("%s delete %s recursive=%v", c.User, p, recursive), err, werr,
		func() string { return diffValue("deleted", got, want) })
}

func (d *diff) opRename() {
	c, src, dst := d.caller(), d.path(70), d.path(50)
	o := namespace.RenameOptions{Overwrite: d.rng.IntN(2) == 0, NoDescend: d.rng.IntN(2) == 0}
	var got string
	err := d.apply(func(tx kv.Txn) (err error) {
		got, err = d.mut.Rename(tx, d.now, c, dflt, src, dst, o)
		return err
	})
	want, werr := runModel(d, func(m *model) (string, error) { return m.rename(c, d.now, src, dst, o) })
	d.outcome(fmt.Sprintf("%s rename %s %s %+v", c.User, src, dst, o), err, werr,
		func() string { return diffValue("final path", got, want) })
}

func (d *diff) opSetPermission() {
	c, p, perm := d.caller(), d.path(70), pick(d, perms)
	err := d.apply(func(tx kv.Txn) error { return d.mut.SetPermission(tx, c, dflt, p, perm) })
	_, werr := runModel(d, func(m *model) (struct{}, error) { return struct{}{}, m.setPermission(c, p, perm) })
	d.outcome(fmt.Sprintf("%s setPermission %s %o", c.User, p, perm), err, werr, nil)
}

func (d *diff) opSetOwner() {
	c, p := d.caller(), d.path(70)
	owner, group := pick(d, []string{"", "", "alice", "bob", "super"}), pick(d, []string{"", "staff", "eng", "supergroup"})
	err := d.apply(func(tx kv.Txn) error { return d.mut.SetOwner(tx, c, dflt, p, owner, group) })
	_, werr := runModel(d, func(m *model) (struct{}, error) { return struct{}{}, m.setOwner(c, p, owner, group) })
	d.outcome(fmt.Sprintf("%s setOwner %s %q %q", c.User, p, owner, group), err, werr, nil)
}

func (d *diff) opSetTimes() {
	c, p := d.caller(), d.path(70)
	mtime, atime := pick(d, []int64{-1, d.rng.Int64N(1e6)}), pick(d, []int64{-1, d.rng.Int64N(1e6)})
	err := d.apply(func(tx kv.Txn) error { return d.mut.SetTimes(tx, c, dflt, p, mtime, atime) })
	_, werr := runModel(d, func(m *model) (struct{}, error) { return struct{}{}, m.setTimes(c, p, mtime, atime) })
	d.outcome(fmt.Sprintf("%s setTimes %s %d %d", c.User, p, mtime, atime), err, werr, nil)
}

func (d *diff) opRecoverLease() {
	c, p := d.caller(), d.file(70)
	var got bool
	err := d.apply(func(tx kv.Txn) (err error) {
		got, err = d.mut.RecoverLease(tx, d.now, c, dflt, p, nil)
		return err
	})
	want, werr := runModel(d, func(m *model) (bool, error) { return m.recoverLease(c, p) })
	d.outcome(fmt.Sprintf("%s recoverLease %s", c.User, p), err, werr,
		func() string { return diffValue("closed", got, want) })
}

func (d *diff) opExpireLease() {
	var all []lease
	if err := namespace.Leases(d.batch, func(h string, ino uint64) bool {
		all = append(all, lease{h, ino})
		return true
	}); err != nil {
		d.fatalf("leases: %v", err)
	}
	l := lease{pick(d, holders), d.rng.Uint64N(50)}
	if len(all) > 0 && d.rng.IntN(4) > 0 {
		l = pick(d, all)
		if d.rng.IntN(3) == 0 {
			l.holder = pick(d, holders) // maybe not the file's holder
		}
	}
	err := d.apply(func(tx kv.Txn) error { return d.mut.ExpireLease(tx, l.holder, l.ino, nil) })
	if err != nil {
		d.fatalf("expireLease %+v: %v", l, err)
	}
	d.m.expireLease(l.holder, l.ino)
	d.outcome(fmt.Sprintf("- expireLease %s %d", l.holder, l.ino), nil, nil, nil)
}

func (d *diff) opPurge() {
	limit := 1 + d.rng.IntN(4)
	before := d.purgePending()
	inodes := d.inodeCount()
	var n int
	err := d.apply(func(tx kv.Txn) (err error) {
		n, err = namespace.Purge(tx, limit)
		return err
	})
	if err != nil {
		d.fatalf("purge: %v", err)
	}
	after := d.purgePending()
	if !after {
		d.m.purged()
	}
	d.outcome(fmt.Sprintf("- purge %d -> %d removed, pending %v", limit, n, after), nil, nil, nil)
	d.stats["purged inodes"] += n
	if removed := inodes - d.inodeCount(); n != removed || n > limit || before && n == 0 || !before && n != 0 || after && n < limit {
		d.fatalf("purge %d reported %d removed, removed %d; pending before %v, after %v", limit, n, removed, before, after)
	}
}

func (d *diff) purgePending() bool {
	pending, err := namespace.PurgePending(d.batch)
	if err != nil {
		d.fatalf("purgePending: %v", err)
	}
	return pending
}

func (d *diff) inodeCount() int {
	s, err := readRaw(d.batch)
	if err != nil {
		d.fatalf("keyspace: %v", err)
	}
	return len(s.inodes)
}

// drainPurge runs Purge until nothing is pending.
func (d *diff) drainPurge() {
	for d.purgePending() {
		d.opPurge()
	}
}

func diffValue[T comparable](what string, got, want T) string {
	if got != want {
		return fmt.Sprintf("%s: namespace %v, model %v", what, got, want)
	}
	return ""
}
