package main

import (
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func adminCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "admin", Short: "Administer namespaces and the cluster"}
	cmd.AddCommand(nsCmd(), statusCmd(), workersCmd(), memberCmd(), loadCmd(), uncacheCmd(), syncCmd(), tokenCmd())
	return cmd
}

func statusCmd() *cobra.Command {
	var f clientFlags
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show each namespace service member's role, term, indexes and lag",
		Long: `Ask every member of the namespace service (those given with --meta and those
the group's configuration names) for its state, each directly:

  MEMBER     the member's id (? when it did not answer)
  ROLE       Leader, Follower, Candidate, PreCandidate (or the error)
  TERM       its current Raft term
  COMMITTED  the last log index it knows to be committed
  APPLIED    the last log index its state machine applied
  LAG        how far its applied index is behind the leader's commit index

The exit status is 1 when a member does not answer or no leader is known.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			defer c.Close()
			list := c.MemberStatuses(cmd.Context())
			var leaderCommit uint64
			for _, m := range list {
				if m.Err == nil && m.Status.Role == "StateLeader" {
					leaderCommit = m.Status.CommittedIndex
				}
			}
			w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "MEMBER\tADDRESS\tROLE\tTERM\tCOMMITTED\tAPPLIED\tLAG\tVERSION")
			failed := leaderCommit == 0
			for _, m := range list {
				if m.Err != nil {
					failed = true
					fmt.Fprintf(w, "?\t%s\t%s\t\t\t\t\t\n", m.Address, shortError(m.Err))
					continue
				}
				st := m.Status
				lag := "-"
				if leaderCommit > 0 {
					lag = fmt.Sprint(leaderCommit - min(leaderCommit, st.AppliedIndex))
				}
				fmt.Fprintf(w, "%d\t%s\t%s\t%d\t%d\t%d\t%s\t%s\n", st.MemberId, m.Address, strings.TrimPrefix(st.Role, "State"),
					st.Term, st.CommittedIndex, st.AppliedIndex, lag, st.Version)
			}
			if err := w.Flush(); err != nil {
				return err
			}
			if failed {
				return exitCode(1)
			}
			return nil
		},
	}
	f.register(cmd)
	return cmd
}

// shortError names why a member did not answer in a few words.
func shortError(err error) string {
	switch st, _ := status.FromError(err); st.Code() {
	case codes.Unavailable:
		return "unreachable"
	case codes.DeadlineExceeded:
		return "no answer"
	default:
		return st.Message()
	}
}

func workersCmd() *cobra.Command {
	var f clientFlags
	cmd := &cobra.Command{
		Use:   "workers",
		Short: "Show the live workers and their cache and traffic counters",
		Long: `Show every live worker with its cache use and counters: cache hits and
misses, evictions, corrupt pages dropped, bytes served over the worker's RPC,
bytes of its cache lent to clients on its host that read them themselves
(SC-READ: short-circuit), and bytes moved to and from the bucket. A cached
read on the worker's host should raise SC-READ, not RPC-READ.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			defer c.Close()
			list, err := c.WorkerStats(cmd.Context())
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(w, "WORKER\tUSED\tCAPACITY\tBLOCKS\tHITS\tMISSES\tEVICTIONS\tCORRUPT\tRPC-READ\tSC-READ\tBUCKET-IN\tBUCKET-OUT\t")
			for _, s := range list {
				fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t\n", s.WorkerId, human(s.Used), human(s.Capacity),
					s.CachedBlocks, s.Hits, s.Misses, s.Evictions, s.Corruptions, human(s.RpcBytesRead),
					human(s.ShortCircuitBytes), human(s.BucketBytesRead), human(s.BucketBytesWritten))
			}
			return w.Flush()
		},
	}
	f.register(cmd)
	return cmd
}

// human prints a byte count with a binary unit.
func human(n uint64) string {
	const units = "KMGTPE"
	if n < 1024 {
		return fmt.Sprintf("%dB", n)
	}
	v, i := float64(n)/1024, 0
	for v >= 1024 && i < len(units)-1 {
		v, i = v/1024, i+1
	}
	return fmt.Sprintf("%.1f%ciB", v, units[i])
}
