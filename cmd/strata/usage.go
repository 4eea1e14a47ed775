package main

import (
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	pb "github.com/stratafs/strata/proto/strata/v1"
)

func usageCmd() *cobra.Command {
	var f clientFlags
	cmd := &cobra.Command{
		Use:   "usage",
		Short: "Show what each namespace holds and the work the service has queued (superusers only)",
		Long: `Ask the namespace service's leader what it holds and does: for each namespace,
those in the trash too,

  NAMESPACE  its name
  MODE       block or cache
  FILES      the files below its root
  DIRS       the directories, its root included
  BYTES      the bytes of its files
  STATE      live, or in the trash until it is removed for good

from its root's aggregates (no walk: as 'fs -count' answers); then the work
the leader has queued (files being written, blocks of deleted files for the
block collector, deleted trees to purge), and the leader's version, start
and live workers. Only a superuser may ask.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			defer c.Close()
			st, err := c.ServerStatus(cmd.Context())
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "NAMESPACE\tMODE\tFILES\tDIRS\tBYTES\tSTATE")
			for _, u := range st.Namespaces {
				ns := u.Namespace
				fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%s\t%s\n", ns.Name, modeText(ns), u.Files, u.Directories, human(u.Length), stateText(ns))
			}
			if err := w.Flush(); err != nil {
				return err
			}
			fmt.Println(queued(st))
			fmt.Printf("leader: version %s, up since %s, %d live workers\n", st.Version,
				time.UnixMilli(st.Started).UTC().Format("2006-01-02 15:04:05 UTC"), st.LiveWorkers)
			return nil
		},
	}
	f.register(cmd)
	return cmd
}

// queued says what work the leader has queued.
func queued(st *pb.GetServerStatusResponse) string {
	garbage := fmt.Sprint(st.GarbageBlocks)
	if st.GarbageBlocks >= 10000 {
		garbage = "10000 or more"
	}
	purge := "none"
	if st.PurgePending {
		purge = "some"
	}
	return fmt.Sprintf("queued: %d files being written, %s blocks of deleted files to collect, %s deleted trees to purge",
		st.OpenFiles, garbage, purge)
}
