package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/stratafs/strata/internal/metaserver"
)

func metaBackupCmd() *cobra.Command {
	var dataDir string
	cmd := &cobra.Command{
		Use:   "backup --data-dir DIR OUT",
		Short: "Back up a stopped member's state into OUT (a new directory)",
		Long: `Write a backup of the namespace service's state, as a stopped member holds
it in --data-dir, into OUT, a directory that must not exist: every
namespace's directories, files and block records, the tokens' signing keys
(keep the backup as secret as the cluster) and the membership, as of the
last entry the member applied. The blocks stay in the buckets.

Stop one member with SIGTERM (a group of three goes on serving without it),
back it up, and start it again: it catches up. (A member killed instead
holds its state as of an earlier entry: the backup is as of that one.) Restore with "strata meta
--restore-from OUT" on the members of a new group (docs/deploy.md).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := metaserver.Backup(dataDir, args[0]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "backed up %s into %s\n", dataDir, args[0])
			return nil
		},
	}
	cmd.Flags().StringVar(&dataDir, "data-dir", "./strata-data", "the stopped member's data directory")
	return cmd
}

// restore makes f's data directory a member of a new group whose state is
// the backup at f.restoreFrom, unless the directory holds a state already
// (a member restored before and restarted with the same flags).
func (f *metaFlags) restore(cfg metaserver.Config) error {
	if f.restoreFrom == "" {
		return nil
	}
	if _, err := os.Stat(filepath.Join(f.dataDir, "state")); !errors.Is(err, fs.ErrNotExist) {
		return err // nil: restored already
	}
	if f.initial == "" {
		return errors.New("--restore-from makes a new group: give its members with --initial-cluster")
	}
	return metaserver.RestoreBackup(f.restoreFrom, f.dataDir, cfg.ClusterID, cfg.InitialMembers)
}
