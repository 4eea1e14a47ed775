package metrics

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/stratafs/strata/internal/metaserver"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// MemberReport is the collector of what a member holds, read from its
// Report at each scrape: Raft's indexes and each follower's lag, pebble's
// figures and the hot cache's, each namespace's usage, the leases and the
// live workers.
type MemberReport struct {
	report func() metaserver.Report
}

// NewMemberReport registers the collector of report's figures on reg.
func NewMemberReport(reg prometheus.Registerer, report func() metaserver.Report) {
	reg.MustRegister(&MemberReport{report: report})
}

var (
	raftTerm      = newDesc("strata_raft_term", "The member's current Raft term.")
	raftCommit    = newDesc("strata_raft_commit_index", "The last log index the member knows committed.")
	raftApplied   = newDesc("strata_raft_applied_index", "The last log index the member's state applied.")
	raftLast      = newDesc("strata_raft_last_index", "The last index in the member's log.")
	raftLeader    = newDesc("strata_raft_leader", "The id of the leader the member knows of (0: none).")
	raftIsLeader  = newDesc("strata_raft_is_leader", "1 if this member leads, else 0.")
	raftMembers   = newDesc("strata_raft_members", "Members of the group as this member's state has them.")
	raftMatch     = newDesc("strata_raft_follower_match_index", "As the leader sees it: the index up to which a member's log matches its own.", "member")
	raftLag       = newDesc("strata_raft_follower_lag_entries", "As the leader sees it: entries of its log a member does not have yet.", "member")
	raftAnswering = newDesc("strata_raft_follower_answering", "As the leader sees it: 1 if a member answered within two election timeouts.", "member")
	raftSnapshot  = newDesc("strata_raft_last_snapshot_bytes", "Size of the last snapshot this member sent or restored.")

	pebbleCompactions = newDesc("strata_pebble_compactions_total", "Compactions the state's pebble completed.")
	pebbleDebt        = newDesc("strata_pebble_compaction_debt_bytes", "Bytes pebble estimates its compactions are behind.")
	pebbleRunning     = newDesc("strata_pebble_compactions_running", "Compactions in progress.")
	pebbleReadAmp     = newDesc("strata_pebble_read_amplification", "Levels and sublevels a read may look in.")
	pebbleFlushes     = newDesc("strata_pebble_flushes_total", "Memtables flushed to tables.")
	pebbleDisk        = newDesc("strata_pebble_disk_bytes", "Disk the state's pebble uses: tables, logs, manifests.")
	blockCacheHits    = newDesc("strata_pebble_block_cache_hits_total", "Lookups pebble's block cache answered.")
	blockCacheMisses  = newDesc("strata_pebble_block_cache_misses_total", "Lookups pebble's block cache missed.")
	blockCacheBytes   = newDesc("strata_pebble_block_cache_bytes", "Bytes pebble's block cache holds.")
	hotHits           = newDesc("strata_hot_cache_hits_total", "Lookups the state's hot-value cache answered.")
	hotMisses         = newDesc("strata_hot_cache_misses_total", "Lookups the state's hot-value cache missed.")
	hotBytes          = newDesc("strata_hot_cache_bytes", "Bytes the hot-value cache holds.")

	nsFiles   = newDesc("strata_namespace_files", "Files a namespace holds (its root's aggregates).", "namespace", "mode")
	nsDirs    = newDesc("strata_namespace_directories", "Directories a namespace holds, its root included.", "namespace", "mode")
	nsBytes   = newDesc("strata_namespace_bytes", "Bytes of the files a namespace holds.", "namespace", "mode")
	nsTrash   = newDesc("strata_namespace_in_trash", "1 if the namespace was deleted and waits in the trash.", "namespace", "mode")
	openFiles = newDesc("strata_meta_open_files", "Files being written: leases held.")
	garbage   = newDesc("strata_meta_garbage_blocks", "Blocks of deleted files queued for removal from their buckets (at most 10,000 counted).")
	purge     = newDesc("strata_meta_purge_pending", "1 if deleted subtrees wait to be purged.")
	workers   = newDesc("strata_meta_live_workers", "Workers heard from recently.")
	buildInfo = newDesc("strata_build_info", "1, labelled with the build's version.", "version")
)

// Describe implements prometheus.Collector.
func (c *MemberReport) Describe(ch chan<- *prometheus.Desc) {
	describeAll(ch, raftTerm, raftCommit, raftApplied, raftLast, raftLeader, raftIsLeader, raftMembers, raftMatch, raftLag,
		raftAnswering, raftSnapshot, pebbleCompactions, pebbleDebt, pebbleRunning, pebbleReadAmp, pebbleFlushes, pebbleDisk,
		blockCacheHits, blockCacheMisses, blockCacheBytes, hotHits, hotMisses, hotBytes, nsFiles, nsDirs, nsBytes, nsTrash,
		openFiles, garbage, purge, workers, buildInfo)
}

// Collect implements prometheus.Collector.
func (c *MemberReport) Collect(ch chan<- prometheus.Metric) {
	r := c.report()
	collectRaft(ch, r)
	st := r.Store
	for _, m := range []prometheus.Metric{counter(pebbleCompactions, float64(st.Compactions)),
		gauge(pebbleDebt, float64(st.CompactionDebt)), gauge(pebbleRunning, float64(st.CompactionsRunning)),
		gauge(pebbleReadAmp, float64(st.ReadAmp)), counter(pebbleFlushes, float64(st.Flushes)),
		gauge(pebbleDisk, float64(st.DiskBytes)), counter(blockCacheHits, float64(st.BlockCacheHits)),
		counter(blockCacheMisses, float64(st.BlockCacheMisses)), gauge(blockCacheBytes, float64(st.BlockCacheBytes)),
		counter(hotHits, float64(st.HotHits)), counter(hotMisses, float64(st.HotMisses)), gauge(hotBytes, float64(st.HotBytes)),
		gauge(workers, float64(len(r.Workers))), gauge(buildInfo, 1, metaserver.Version)} {
		ch <- m
	}
	if r.Usage != nil {
		collectUsage(ch, r.Usage)
	}
}

func collectRaft(ch chan<- prometheus.Metric, r metaserver.Report) {
	s := r.Status
	ch <- gauge(raftTerm, float64(s.GetTerm()))
	ch <- gauge(raftCommit, float64(s.GetCommittedIndex()))
	ch <- gauge(raftApplied, float64(s.GetAppliedIndex()))
	ch <- gauge(raftLast, float64(s.GetLastIndex()))
	ch <- gauge(raftLeader, float64(s.GetLeaderId()))
	leader := s.GetLeaderId() != 0 && s.GetLeaderId() == s.GetMemberId()
	ch <- gauge(raftIsLeader, boolValue(leader))
	ch <- gauge(raftMembers, float64(len(s.GetMembers())))
	ch <- gauge(raftSnapshot, float64(r.SnapshotBytes))
	if !leader {
		return
	}
	for _, m := range s.GetMembers() {
		id := memberLabel(m.GetId())
		ch <- gauge(raftMatch, float64(m.GetMatchIndex()), id)
		ch <- gauge(raftLag, float64(s.GetLastIndex()-min(m.GetMatchIndex(), s.GetLastIndex())), id)
		ch <- gauge(raftAnswering, boolValue(m.GetAnswering()), id)
	}
}

func collectUsage(ch chan<- prometheus.Metric, u *pb.GetServerStatusResponse) {
	for _, ns := range u.GetNamespaces() {
		info := ns.GetNamespace()
		name, mode := info.GetName(), modeLabel(info.GetMode())
		ch <- gauge(nsFiles, float64(ns.GetFiles()), name, mode)
		ch <- gauge(nsDirs, float64(ns.GetDirectories()), name, mode)
		ch <- gauge(nsBytes, float64(ns.GetLength()), name, mode)
		ch <- gauge(nsTrash, boolValue(info.GetDeleted() != 0), name, mode)
	}
	ch <- gauge(openFiles, float64(u.GetOpenFiles()))
	ch <- gauge(garbage, float64(u.GetGarbageBlocks()))
	ch <- gauge(purge, boolValue(u.GetPurgePending()))
}

// modeLabel is a namespace mode as a label: "block" or "cache".
func modeLabel(m pb.NamespaceMode) string {
	return strings.ToLower(strings.TrimPrefix(m.String(), "NAMESPACE_MODE_"))
}
