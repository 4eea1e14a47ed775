package metaserver

import (
	raftpb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/encoding/protowire"
)

// Volatile entries: the log entries of hflushes (docs/datapath.md,
// "Flushes"). An hflush need only survive the kill of any process, not a
// power cut, as HDFS's pipeline: the members acknowledge its entry once it
// is written to their logs, before a sync (raftnode's Config.Volatile), and
// keep its effects in memory until the log is synced (apply.go). An hsync,
// and every other mutation, is durable once answered.

// commandVolatile is Command.volatile's field number.
const commandVolatile = 4

// volatileEntry reports whether the entry whose data is data is a
// Command the leader marked volatile. It reads the fields before the
// command's operation only: the mark precedes it (field order).
func volatileEntry(data []byte) bool {
	for len(data) > 0 {
		num, typ, n := protowire.ConsumeTag(data)
		if n < 0 || num > commandVolatile {
			return false
		}
		data = data[n:]
		if num == commandVolatile && typ == protowire.VarintType {
			v, n := protowire.ConsumeVarint(data)
			return n > 0 && v != 0
		}
		if n = protowire.ConsumeFieldValue(num, typ, data); n < 0 {
			return false
		}
		data = data[n:]
	}
	return false
}

// durableEntry reports whether entry e must be durable once applied: any
// but a volatile Command's.
func durableEntry(e *raftpb.Entry) bool {
	return e.GetType() != raftpb.EntryType_EntryNormal || !volatileEntry(e.GetData())
}

// volatileCommands reports whether every command of q is an hflush: a
// Flush without sync.
func volatileCommands(q []*proposal) bool {
	for _, p := range q {
		if f := p.cmd.GetFlush(); f == nil || f.GetSync() {
			return false
		}
	}
	return true
}
