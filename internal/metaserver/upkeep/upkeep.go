// Package upkeep is the namespace service's periodic work: a scheduler
// that runs each registered job once a period, and at once when kicked,
// and the jobs the leader does on its own, in bounded commands: the block
// garbage collection, the purge of deleted trees, the users' trash, the
// namespaces whose time in the trash is over, and forgetting the answers
// kept for retries. Other parts register jobs of their own (lease expiry,
// tokens, the upload sweep) with the same scheduler.
//
// A job runs on every member and does its work only while the member
// leads: the jobs here read the applied state and propose commands through
// Replica, which a member, or a test's in-memory replica, provides. It is
// not the state machine: the commands it proposes are statemachine's.
package upkeep

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/statemachine"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// Replica is what the jobs need of the member they run on. Its methods
// are safe for concurrent use.
type Replica interface {
	// Applied runs fn against the applied state (no read barrier: only the
	// leader proposes, and a proposal that lost its race fails alone).
	Applied(fn func(kv.Reader) error) error
	// Propose logs cmd and waits until it is applied; the error is the
	// command's answer if it failed, or why it was not applied.
	Propose(ctx context.Context, cmd *pb.Command) (statemachine.Result, error)
	// IsLeader reports whether this member leads.
	IsLeader() bool
	// Now is the member's clock.
	Now() time.Time
}

// Job is a piece of periodic work.
type Job struct {
	Name  string
	Every time.Duration
	// Run does the work once. A failed run is logged, and the next one
	// tries again.
	Run func(ctx context.Context) error
}

// Scheduler runs jobs. Jobs are added before Start; Kick and Run are safe
// for concurrent use.
type Scheduler struct {
	log    *slog.Logger
	jobs   map[string]*job
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

type job struct {
	Job
	kick chan struct{} // a kick waits here, one at most
}

// NewScheduler returns a scheduler without jobs.
func NewScheduler(log *slog.Logger) *Scheduler {
	return &Scheduler{log: log, jobs: map[string]*job{}}
}

// Add registers j. Each job is registered once: a second of its name
// panics.
func (s *Scheduler) Add(j Job) {
	if _, dup := s.jobs[j.Name]; dup {
		panic(fmt.Sprintf("upkeep: job %q registered twice", j.Name))
	}
	s.jobs[j.Name] = &job{Job: j, kick: make(chan struct{}, 1)}
}

// Kick has job name run at once (after its run under way, if any); a kick
// before Start runs it as soon as the scheduler starts. An unknown name
// panics.
func (s *Scheduler) Kick(name string) {
	select {
	case s.job(name).kick <- struct{}{}:
	default:
	}
}

// Run runs job name now, in the caller: for tests, and for work that
// must be done before an answer.
func (s *Scheduler) Run(ctx context.Context, name string) error { return s.job(name).Run(ctx) }

func (s *Scheduler) job(name string) *job {
	j, ok := s.jobs[name]
	if !ok {
		panic(fmt.Sprintf("upkeep: no job %q", name))
	}
	return j
}

// Start starts every job, a goroutine each, until Stop.
func (s *Scheduler) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	for _, j := range s.jobs {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.loop(ctx, j)
		}()
	}
}

func (s *Scheduler) loop(ctx context.Context, j *job) {
	t := time.NewTicker(j.Every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-j.kick:
		case <-t.C:
		}
		if err := j.Run(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn(j.Name, "err", err)
		}
	}
}

// Stop stops the jobs, interrupting the runs under way, and waits until
// they are over.
func (s *Scheduler) Stop() {
	if s.cancel != nil {
		s.cancel()
	}
	s.wg.Wait()
}
