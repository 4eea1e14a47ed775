package metabench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/stratafs/strata/internal/client"
)

// Op is one kind of benchmarked operation.
type Op string

// The operations, in the order a full run would use them.
const (
	OpMkdir     Op = "mkdir"
	OpCreate    Op = "create"
	OpStream    Op = "createstream"
	OpCreate512 Op = "create512"
	OpStat      Op = "stat"
	OpOpen      Op = "open"
	OpList      Op = "list"
	OpRename    Op = "rename"
	OpDelete    Op = "delete"
)

// AllOps lists every operation.
var AllOps = []Op{OpMkdir, OpCreate, OpStream, OpCreate512, OpStat, OpOpen, OpList, OpRename, OpDelete}

// DefaultOps is what a run does unless told otherwise.
var DefaultOps = []Op{OpCreate, OpStat, OpList, OpRename, OpDelete}

// DefaultThreads are the thread counts of a default run.
var DefaultThreads = []int{1, 4, 16, 64}

// InlineSize is the content size of create512.
const InlineSize = 512

// Describe says what an operation measures, in the terms of HDFS's NNBench
// and the Hadoop FileSystem API.
func (o Op) Describe() string {
	switch o {
	case OpMkdir:
		return "mkdirs of a new directory"
	case OpCreate:
		return "create of an empty file, closed, in one call (create_write, 0 bytes)"
	case OpStream:
		return "create of a file open for writing, then close: two calls"
	case OpCreate512:
		return "create of a 512 B file in one call (create_write; content inline)"
	case OpStat:
		return "getFileStatus of a file"
	case OpOpen:
		return "open + read of a file (open_read)"
	case OpList:
		return "listStatus of a thread's directory, all pages"
	case OpRename:
		return "rename of a file to a new name in its directory"
	case OpDelete:
		return "delete of a file"
	}
	return "?"
}

// makesFiles reports whether o creates the current file set.
func (o Op) makesFiles() bool { return o == OpCreate || o == OpStream || o == OpCreate512 }

// needsFiles reports whether o acts on the current file set.
func (o Op) needsFiles() bool {
	switch o {
	case OpStat, OpOpen, OpList, OpRename, OpDelete:
		return true
	}
	return false
}

// ParseOps parses a comma-separated list of operations.
func ParseOps(s string) ([]Op, error) {
	var ops []Op
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		op := Op(strings.ToLower(f))
		if !op.valid() {
			return nil, fmt.Errorf("unknown operation %q (want one of %s)", f, opNames(AllOps))
		}
		ops = append(ops, op)
	}
	if len(ops) == 0 {
		return nil, errors.New("no operations")
	}
	return ops, nil
}

func (o Op) valid() bool {
	for _, a := range AllOps {
		if o == a {
			return true
		}
	}
	return false
}

func opNames(ops []Op) string {
	s := make([]string, len(ops))
	for i, o := range ops {
		s[i] = string(o)
	}
	return strings.Join(s, ",")
}

// ParseThreads parses a comma-separated list of positive thread counts.
func ParseThreads(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("bad thread count %q: want a positive integer", f)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, errors.New("no thread counts")
	}
	return out, nil
}

// Config is one benchmark run.
type Config struct {
	// Clients drive the service; thread i uses Clients[i%len(Clients)], so
	// several clients spread the threads over several gRPC connections.
	Clients []*client.Client
	// Target says, for the report, where the service runs (its address,
	// or that it is embedded in this process).
	Target string
	// Dir is the absolute base directory of the run; it must not exist.
	// Thread t of the run with T threads works in Dir/tT/t.
	Dir string
	// Threads are the thread counts, run in order.
	Threads []int
	// Files is the number of operations of each phase (per thread count),
	// split evenly between the threads.
	Files int
	// Ops are the phases, run in order for each thread count.
	Ops []Op
	// ListPasses is how many times each thread lists its directory in the
	// list phase; 0 means 10.
	ListPasses int
	// Keep leaves Dir in place at the end.
	Keep bool
	// Progress receives progress lines; nil discards them.
	Progress io.Writer
	// ProgressEvery is the period of progress lines within a phase; 0
	// means 2 s.
	ProgressEvery time.Duration
	// OnPhase, if set, is called just before each timed phase starts; the
	// function it returns is called as soon as the phase ends (a CPU
	// profile of exactly one phase, for example).
	OnPhase func(op Op, threads int) (end func())
	// Prepare, if set, makes Dir before the first phase (Dir does not
	// exist yet): a run whose threads are not the superuser needs Dir
	// given to them, or governed by quotas and an ACL.
	Prepare func(ctx context.Context, dir string) error
}

func (c *Config) validate() error {
	switch {
	case len(c.Clients) == 0:
		return errors.New("metabench: no clients")
	case !strings.HasPrefix(c.Dir, "/") && !strings.HasPrefix(c.Dir, client.Scheme):
		return fmt.Errorf("metabench: base directory %q is not absolute", c.Dir)
	case len(c.Threads) == 0:
		return errors.New("metabench: no thread counts")
	case c.Files < 1:
		return errors.New("metabench: files must be at least 1")
	case len(c.Ops) == 0:
		return errors.New("metabench: no operations")
	}
	for _, t := range c.Threads {
		if t < 1 {
			return fmt.Errorf("metabench: bad thread count %d", t)
		}
	}
	return nil
}

func (c *Config) setDefaults() {
	if c.ListPasses <= 0 {
		c.ListPasses = 10
	}
	if c.ProgressEvery <= 0 {
		c.ProgressEvery = 2 * time.Second
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	c.Dir = strings.TrimSuffix(c.Dir, "/")
}
