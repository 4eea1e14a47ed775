package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/statemachine"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

func nsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "ns", Short: "Create, list, delete and restore namespaces"}
	cmd.AddCommand(nsCreateCmd(), nsListCmd(), nsDeleteCmd(), nsRestoreCmd())
	return cmd
}

func nsCreateCmd() *cobra.Command {
	var f clientFlags
	var mode, store string
	var syncInterval int64
	cmd := &cobra.Command{
		Use:   "create NAME --store URI [--mode cache --sync-interval SECONDS]",
		Short: "Create a namespace",
		Long: `Create a namespace, addressed afterwards as strata://NAME/path. Its data goes
to the bucket named by --store: file:///absolute/dir or s3://bucket/prefix.
The service checks the bucket first: a block-mode namespace's bucket must
take a probe object (written and removed at once), a cache-mode one's must
answer a listing. Only a superuser may create namespaces. Names are 1-63
lower-case letters, digits, '-' and '_', starting with a letter or a digit.

--mode block (the default): Strata owns the namespace; files are cut into
blocks stored as objects under blocks/ in the bucket, renames are atomic.

--mode cache: the namespace is a view of the bucket as it is. Every object
is a file at its key, every prefix a directory; what other tools put there
shows, and what Strata writes is a plain object any S3 client reads. Strata
caches the listings and the data. --sync-interval says how long what it
loaded from the bucket is trusted: -1 for ever (only Strata writes the
bucket; 'strata admin sync PATH' forces a check), 0 not at all (the bucket
is asked on every access), N for N seconds. Renames copy and delete, object
by object, as S3A's do. See docs/cachemode.md.`,
		Example: `  strata admin ns create warehouse --store 's3://bucket/strata?endpoint=http://minio:9000'
  strata admin ns create lake --mode cache --sync-interval 60 --store s3://datalake/`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, ok := map[string]pb.NamespaceMode{"block": pb.NamespaceMode_NAMESPACE_MODE_BLOCK, "cache": pb.NamespaceMode_NAMESPACE_MODE_CACHE}[mode]
			if !ok {
				return fmt.Errorf("--mode must be block or cache, not %q", mode)
			}
			if store == "" {
				return fmt.Errorf("--store is required (file:///absolute/dir or s3://bucket/prefix)")
			}
			if m != pb.NamespaceMode_NAMESPACE_MODE_CACHE && cmd.Flags().Changed("sync-interval") {
				return fmt.Errorf("--sync-interval is for --mode cache only")
			}
			if syncInterval < -1 {
				return fmt.Errorf("--sync-interval must be -1, 0 or a number of seconds, not %d", syncInterval)
			}
			c, err := f.client()
			if err != nil {
				return err
			}
			defer c.Close()
			return c.CreateNamespace(cmd.Context(), &pb.NamespaceInfo{Name: args[0], Mode: m, StoreUri: store,
				SyncInterval: syncInterval})
		},
	}
	cmd.Flags().StringVar(&mode, "mode", "block", "block (Strata owns the namespace) or cache (in front of an existing bucket)")
	cmd.Flags().StringVar(&store, "store", "", "bucket URI: file:///absolute/dir or s3://bucket/prefix")
	cmd.Flags().Int64Var(&syncInterval, "sync-interval", 0, "cache mode: seconds what was loaded from the bucket is trusted (-1 for ever, 0 not at all)")
	f.register(cmd)
	return cmd
}

func nsListCmd() *cobra.Command {
	var f clientFlags
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List namespaces, those in the trash too",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			defer c.Close()
			list, err := c.Namespaces(cmd.Context())
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "NAME\tMODE\tSTORE\tCREATED\tSTATE")
			for _, ns := range list {
				mode := modeText(ns)
				if ns.Mode == pb.NamespaceMode_NAMESPACE_MODE_CACHE {
					mode += " (sync " + syncText(ns.SyncInterval) + ")"
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", ns.Name, mode, ns.StoreUri, time.UnixMilli(ns.Created).Format("2006-01-02 15:04"), stateText(ns))
			}
			return w.Flush()
		},
	}
	f.register(cmd)
	return cmd
}

// modeText names namespace ns's mode: block or cache.
func modeText(ns *pb.NamespaceInfo) string {
	return strings.ToLower(strings.TrimPrefix(ns.Mode.String(), "NAMESPACE_MODE_"))
}

// stateText says whether namespace ns is live, or in the trash until when.
func stateText(ns *pb.NamespaceInfo) string {
	if ns.Deleted != 0 {
		return "in the trash until " + statemachine.Stamp(ns.PurgeAt)
	}
	return "live"
}

func nsDeleteCmd() *cobra.Command {
	var f clientFlags
	var force, skipTrash bool
	cmd := &cobra.Command{
		Use:   "delete NAME [--force [--skip-trash]]",
		Short: "Delete a namespace: an empty one at once, one that holds anything only with --force, to the trash",
		Long: `Delete a namespace. An empty namespace is removed at once. One that holds
anything is refused, with what it holds, unless --force is given; it then
goes to the trash with everything in it. A namespace in the trash cannot be
used and its name cannot be taken, and its bucket keeps every object, for
the service's namespace trash period (strata meta --namespace-trash, a day
by default); until then "strata admin ns restore NAME" brings it back as
it was. After it, the service removes it for good.

With --skip-trash as well, the namespace (or one in the trash) is removed
for good at once, and a block-mode namespace's objects are deleted from its
bucket. A cache-mode namespace's bucket keeps its objects, always: deleting
it deletes Strata's view only.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if skipTrash && !force {
				return errors.New("--skip-trash removes a namespace for good: it needs --force too")
			}
			c, err := f.client()
			if err != nil {
				return err
			}
			defer c.Close()
			return deleteNamespace(cmd.Context(), c, args[0], force, skipTrash)
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "delete the namespace even if it holds files (it goes to the trash)")
	cmd.Flags().BoolVar(&skipTrash, "skip-trash", false, "with --force: remove it for good at once, and a block-mode namespace's objects")
	f.register(cmd)
	return cmd
}

// deleteNamespace deletes namespace name as the flags say, and says what
// it holds and what became of it.
func deleteNamespace(ctx context.Context, c *client.Client, name string, force, skipTrash bool) error {
	mode := pb.NamespaceDeleteMode_NAMESPACE_DELETE_MODE_IF_EMPTY
	switch {
	case skipTrash:
		mode = pb.NamespaceDeleteMode_NAMESPACE_DELETE_MODE_NOW
	case force:
		mode = pb.NamespaceDeleteMode_NAMESPACE_DELETE_MODE_TRASH
	}
	// NB: looked up before it goes: what becomes of its objects depends on
	// its mode.
	cache := namespaceInfo(ctx, c, name).GetMode() == pb.NamespaceMode_NAMESPACE_MODE_CACHE
	if force {
		if sum, err := c.ContentSummary(ctx, client.Scheme+name+"/"); err == nil {
			fmt.Printf("Deleting namespace %s: %s.\n", name, holds(sum.FileCount, sum.DirectoryCount, sum.Length))
		}
	}
	resp, err := c.DeleteNamespace(ctx, name, mode)
	if errors.Is(err, fserr.ErrNotEmpty) {
		return refuseNamespaceDelete(ctx, c, name, cache, err)
	}
	if err != nil {
		return err
	}
	sayDeleted(name, resp, namespaceInfo(ctx, c, name), cache)
	return nil
}

// sayDeleted says what became of namespace name, deleted with answer resp:
// info is its listing now (nil once it is gone for good), cache says it
// was a cache-mode namespace, whose bucket keeps its objects whatever.
func sayDeleted(name string, resp *pb.DeleteNamespaceResponse, info *pb.NamespaceInfo, cache bool) {
	what := holds(resp.Files, resp.Directories, resp.Length)
	switch {
	case info.GetDeleted() != 0 && cache:
		fmt.Printf("Moved namespace %s to the trash: %s.\n", name, what)
		fmt.Printf("Its bucket %s keeps every object (a cache-mode namespace's are never deleted); until %s 'strata admin ns restore %s' brings it back.\n",
			info.StoreUri, statemachine.Stamp(info.PurgeAt), name)
	case info.GetDeleted() != 0:
		fmt.Printf("Moved namespace %s to the trash: %s.\n", name, what)
		fmt.Printf("Its objects stay in %s until %s; until then 'strata admin ns restore %s' brings it back.\n",
			info.StoreUri, statemachine.Stamp(info.PurgeAt), name)
	case resp.Files == 0 && resp.Directories <= 1: // the root alone
		fmt.Printf("Deleted namespace %s (it was empty).\n", name)
	case cache:
		fmt.Printf("Deleted namespace %s for good: %s; its bucket keeps every object (a cache-mode namespace's are never deleted).\n", name, what)
	default:
		fmt.Printf("Deleted namespace %s for good: %s; its objects are being deleted from its bucket.\n", name, what)
	}
}

// refuseNamespaceDelete reports that namespace name (a cache-mode one if
// cache) holds something and was not deleted, and how to delete it.
func refuseNamespaceDelete(ctx context.Context, c *client.Client, name string, cache bool, refusal error) error {
	sum, err := c.ContentSummary(ctx, client.Scheme+name+"/")
	if err != nil {
		return refusal
	}
	keep := "for a while"
	if d, err := c.ServerDefaults(ctx); err == nil && d.NamespaceTrashMs > 0 {
		keep = "for " + shortDuration(time.Duration(d.NamespaceTrashMs)*time.Millisecond)
	}
	fmt.Fprintf(os.Stderr, "strata: namespace %s is not empty: it holds %s. Nothing was deleted.\n",
		name, holds(sum.FileCount, sum.DirectoryCount, sum.Length))
	fmt.Fprintf(os.Stderr, "  strata admin ns delete --force %s                moves it to the trash, restorable %s\n", name, keep)
	what := "it and its objects"
	if cache {
		what = "it (not its bucket's objects)"
	}
	fmt.Fprintf(os.Stderr, "  strata admin ns delete --force --skip-trash %s   deletes %s for good now\n", name, what)
	return exitCode(1)
}

// namespaceInfo returns the listing of namespace name, or nil.
func namespaceInfo(ctx context.Context, c *client.Client, name string) *pb.NamespaceInfo {
	list, _ := c.Namespaces(ctx)
	for _, ns := range list {
		if ns.Name == name {
			return ns
		}
	}
	return nil
}

func nsRestoreCmd() *cobra.Command {
	var f clientFlags
	cmd := &cobra.Command{
		Use:   "restore NAME",
		Short: "Bring a deleted namespace back from the trash",
		Long: `Bring a namespace that "strata admin ns delete --force" moved to the trash
back, as it was when it was deleted, while its time in the trash lasts
("strata admin ns list" shows until when).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			defer c.Close()
			if err := c.RestoreNamespace(cmd.Context(), args[0]); err != nil {
				return err
			}
			sum, err := c.ContentSummary(cmd.Context(), client.Scheme+args[0]+"/")
			if err != nil {
				return err
			}
			fmt.Printf("Restored namespace %s: %s.\n", args[0], holds(sum.FileCount, sum.DirectoryCount, sum.Length))
			return nil
		},
	}
	f.register(cmd)
	return cmd
}

// holds says what a namespace holds: files, directories below its root
// (dirs is a content summary's count, which includes the root) and bytes.
func holds(files, dirs, length uint64) string {
	dirs = max(dirs, 1) - 1
	size := plural(length, "byte")
	if length >= 1024 {
		size += " (" + human(length) + ")"
	}
	return fmt.Sprintf("%s, %s, %s", plural(files, "file"), plural(dirs, "directory"), size)
}

func plural(n uint64, what string) string {
	switch {
	case n == 1:
		return "1 " + what
	case strings.HasSuffix(what, "y"):
		return fmt.Sprintf("%d %sies", n, strings.TrimSuffix(what, "y"))
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// shortDuration prints d without its zero minutes and seconds: 24h, 1h30m.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// syncText says a cache-mode namespace's sync interval.
func syncText(seconds int64) string {
	switch {
	case seconds < 0:
		return "never"
	case seconds == 0:
		return "always"
	}
	return (time.Duration(seconds) * time.Second).String()
}
