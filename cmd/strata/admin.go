package main

import (
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/stratafs/strata/proto/strata/v1"
)

func adminCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "admin", Short: "Administer namespaces and the cluster"}
	cmd.AddCommand(nsCmd(), statusCmd(), usageCmd(), workersCmd(), memberCmd(), loadCmd(), uncacheCmd(), syncCmd(), tokenCmd(), certCmd(), importCmd())
	cmd.AddCommand(quotaCmd())
	return cmd
}

func statusCmd() *cobra.Command {
	var f clientFlags
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show each namespace service member's role, term, indexes, lag and replication",
		Long: `Ask every member of the namespace service (those given with --meta and those
the group's configuration names) for its state, each directly:

  MEMBER     the member's id (? when it did not answer)
  ROLE       Leader, Follower, Candidate, PreCandidate (or the error)
  TERM       its current Raft term
  COMMITTED  the last log index it knows to be committed
  APPLIED    the last log index its state machine applied
  LAG        how far its applied index is behind the leader's commit index

and, as the leader sees each other member (also one that did not answer):

  MATCH      the index up to which the member's log matches the leader's
  PROGRESS   Replicate (entries stream to it), Probe (the leader looks for
             where its log ends: it was down, or just came back), Snapshot
             (it is being sent the state: its log ends before the leader's
             compaction point); ", silent" when it sent the leader nothing
             for two election timeouts

A member back from a restart shows Probe, then Replicate with its LAG falling
to 0 (in about a second after an outage its log still covers).

The exit status is 1 when a member does not answer or no leader is known.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			defer c.Close()
			list := c.MemberStatuses(cmd.Context())
			var leader *pb.StatusResponse
			for _, m := range list {
				if m.Err == nil && m.Status.Role == "StateLeader" {
					leader = m.Status
				}
			}
			seen := map[string]*pb.Member{} // the leader's view, by address
			for _, m := range leader.GetMembers() {
				seen[m.Address] = m
			}
			w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "MEMBER\tADDRESS\tROLE\tTERM\tCOMMITTED\tAPPLIED\tLAG\tMATCH\tPROGRESS\tVERSION")
			failed := leader == nil
			for _, m := range list {
				match, progress := leaderView(seen[m.Address])
				if m.Err != nil {
					failed = true
					fmt.Fprintf(w, "?\t%s\t%s\t\t\t\t\t%s\t%s\t\n", m.Address, shortError(m.Err), match, progress)
					continue
				}
				st := m.Status
				lag := "-"
				if leader != nil {
					lag = fmt.Sprint(leader.CommittedIndex - min(leader.CommittedIndex, st.AppliedIndex))
				}
				fmt.Fprintf(w, "%d\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\n", st.MemberId, m.Address, strings.TrimPrefix(st.Role, "State"),
					st.Term, st.CommittedIndex, st.AppliedIndex, lag, match, progress, st.Version)
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

// leaderView renders the leader's view of a member for admin status: its
// match index and replication state ("-" for the leader itself, nothing
// when no leader answered).
func leaderView(m *pb.Member) (match, progress string) {
	switch {
	case m == nil:
		return "", ""
	case m.Progress == "":
		return fmt.Sprint(m.MatchIndex), "-"
	case !m.Answering:
		return fmt.Sprint(m.MatchIndex), m.Progress + ", silent"
	default:
		return fmt.Sprint(m.MatchIndex), m.Progress
	}
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
(SC-READ: short-circuit), bytes written into its cache files by writers on
its host (SC-WRITE: short-circuit writes), and bytes moved to and from the
bucket. A cached read on the worker's host should raise SC-READ, not
RPC-READ; a write there, SC-WRITE. HITS and MISSES
count reads (RPC or short-circuit) that found their range cached, or had to
fetch some of it. A worker that died moments ago is still listed by the
service for a few seconds: it is reported on stderr as not answering, and the
others are shown.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			defer c.Close()
			list, err := c.Workers(cmd.Context())
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(w, "WORKER\tUSED\tCAPACITY\tBLOCKS\tHITS\tMISSES\tEVICTIONS\tCORRUPT\tCACHE-ERR\tRPC-READ\tSC-READ\tSC-WRITE\tBUCKET-IN\tBUCKET-OUT\t")
			var silent []string
			for _, r := range list {
				if r.Err != nil {
					silent = append(silent, fmt.Sprintf("%s: %v", r.Info.Id, r.Err))
					continue
				}
				s := r.Stats
				fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t\n", s.WorkerId, human(s.Used), human(s.Capacity),
					s.CachedBlocks, s.Hits, s.Misses, s.Evictions, s.Corruptions, s.CacheWriteErrors, human(s.RpcBytesRead),
					human(s.ShortCircuitBytes), human(s.ShortCircuitBytesWritten), human(s.BucketBytesRead), human(s.BucketBytesWritten))
			}
			if err := w.Flush(); err != nil {
				return err
			}
			for _, m := range silent {
				fmt.Fprintln(os.Stderr, "not answering (listed until the service's 5 s timeout):", m)
			}
			return nil
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
