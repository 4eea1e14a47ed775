package metaserver

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kv/pebblekv"
	"github.com/stratafs/strata/internal/raftnode"
	"github.com/stratafs/strata/internal/statemachine"
)

// A backup is a member's state: a pebble checkpoint of DATA-DIR/state,
// every namespace's directories, files and blocks' records, the tokens'
// signing keys and the membership, as of the last entry the member applied.
// It is taken from a stopped member (the others go on serving: a group of
// three tolerates one down), which then starts again and catches up. A
// member stopped with SIGTERM flushed its state: the backup holds all it
// applied. One killed holds a consistent state as of an earlier entry (its
// last unsynced writes to the state are lost; its log, not backed up,
// would have replayed them), so the backup is as of that entry.
// Restoring it makes a new group: every new member starts from the same
// backup with the same --initial-cluster, its state rebased onto the new
// membership and its log begun after the backup's applied index
// (docs/deploy.md, "Backup and restore"). The blocks stay in the bucket,
// which the backup names and does not hold.

// Backup writes a backup of the state in dataDir, whose member must be
// stopped, to out, which must not exist.
func Backup(dataDir, out string) error {
	if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("metaserver: backup: %s exists: a backup goes into a new directory", out)
	}
	state := filepath.Join(dataDir, "state")
	if _, err := os.Stat(state); err != nil {
		return fmt.Errorf("metaserver: backup: %s holds no member's state: %w", dataDir, err)
	}
	store, err := pebblekv.Open(state, pebblekv.DefaultOptions())
	if err != nil {
		return fmt.Errorf("metaserver: backup: open the state (is the member stopped?): %w", err)
	}
	defer store.Close()
	if index, err := statemachine.AppliedIndex(store.Writer()); err != nil || index == 0 {
		return fmt.Errorf("metaserver: backup: the state in %s has applied nothing (%v): start the member, "+
			"let it catch up, stop it with SIGTERM and back it up then", dataDir, err)
	}
	if err := store.Checkpoint(out); err != nil {
		return fmt.Errorf("metaserver: backup: %w", err)
	}
	return nil
}

// RestoreBackup makes dataDir, which must hold no state nor log, a member
// of a new group of the initial members (cluster clusterID) whose state is
// the backup's.
func RestoreBackup(backup, dataDir, clusterID string, initial map[uint64]string) error {
	state, log := filepath.Join(dataDir, "state"), filepath.Join(dataDir, "raft")
	for _, p := range []string{state, log} {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("metaserver: restore: %s exists: a backup is restored into an empty data directory", p)
		}
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return err
	}
	if err := copyDir(backup, state); err != nil {
		return fmt.Errorf("metaserver: restore: %w", err)
	}
	index, err := rebase(state, initial)
	if err != nil {
		return fmt.Errorf("metaserver: restore: %w", err)
	}
	peers := slices.Sorted(func(yield func(uint64) bool) {
		for id := range initial {
			if !yield(id) {
				return
			}
		}
	})
	return raftnode.Bootstrap(log, clusterID, peers, index)
}

// rebase makes the state in dir a new group's and returns its applied index.
func rebase(dir string, initial map[uint64]string) (uint64, error) {
	store, err := pebblekv.Open(dir, pebblekv.DefaultOptions())
	if err != nil {
		return 0, err
	}
	defer store.Close()
	ov := kv.NewOverlay(store.Writer())
	index, err := statemachine.Rebase(ov, ov, initial)
	if err != nil {
		return 0, err
	}
	return index, store.Commit(ov, true)
}

// copyDir copies the files of src into dst, a new directory (0700).
func copyDir(src, dst string) error {
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	if err := os.Mkdir(dst, 0o700); err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			return fmt.Errorf("%s: %s is not a file (not a backup?)", src, e.Name())
		}
		if err := copyFile(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
