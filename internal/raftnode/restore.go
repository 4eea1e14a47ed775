package raftnode

import "fmt"

// Bootstrap makes a new log in dir for a member of a new group of peers,
// of cluster clusterID, whose state is already at index: a group restored
// from a backup, every member's state the backup's, applied to index. The
// log starts after index, as after a snapshot there, so that raft neither
// replays nor sends what the state holds; the group's terms begin again.
// dir must hold no log.
func Bootstrap(dir, clusterID string, peers []uint64, index uint64) error {
	if len(peers) == 0 || index == 0 {
		return fmt.Errorf("raftnode: bootstrap needs peers and an index (got %v, %d)", peers, index)
	}
	ls, existed, err := openLogStore(dir)
	if err != nil {
		return err
	}
	defer ls.close()
	if existed {
		return fmt.Errorf("raftnode: %s holds a log already", dir)
	}
	if err := ls.checkCluster(clusterID); err != nil {
		return err
	}
	return ls.bootstrapAt(peers, index)
}
