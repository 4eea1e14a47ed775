package main

import (
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	pb "github.com/stratafs/strata/proto/strata/v1"
)

func adminCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "admin", Short: "Administer namespaces and the cluster"}
	cmd.AddCommand(nsCmd(), statusCmd())
	return cmd
}

func nsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "ns", Short: "Create, list and delete namespaces"}
	cmd.AddCommand(nsCreateCmd(), nsListCmd(), nsDeleteCmd())
	return cmd
}

func nsCreateCmd() *cobra.Command {
	var f clientFlags
	var mode, store string
	cmd := &cobra.Command{
		Use:   "create NAME --store URI",
		Short: "Create a namespace",
		Long: `Create a namespace, addressed afterwards as strata://NAME/path. Its data goes
to the bucket named by --store: file:///dir or s3://bucket/prefix. Only a
superuser may create namespaces. Names are 1-63 lower-case letters, digits,
'-' and '_'.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, ok := map[string]pb.NamespaceMode{"block": pb.NamespaceMode_NAMESPACE_MODE_BLOCK, "cache": pb.NamespaceMode_NAMESPACE_MODE_CACHE}[mode]
			if !ok {
				return fmt.Errorf("--mode must be block or cache, not %q", mode)
			}
			if store == "" {
				return fmt.Errorf("--store is required (file:///dir or s3://bucket/prefix)")
			}
			c, err := f.client()
			if err != nil {
				return err
			}
			defer c.Close()
			return c.CreateNamespace(cmd.Context(), args[0], m, store)
		},
	}
	cmd.Flags().StringVar(&mode, "mode", "block", "block (Strata owns the namespace) or cache (in front of an existing bucket)")
	cmd.Flags().StringVar(&store, "store", "", "bucket URI: file:///dir or s3://bucket/prefix")
	f.register(cmd)
	return cmd
}

func nsListCmd() *cobra.Command {
	var f clientFlags
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List namespaces",
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
			fmt.Fprintln(w, "NAME\tMODE\tSTORE\tCREATED")
			for _, ns := range list {
				mode := strings.ToLower(strings.TrimPrefix(ns.Mode.String(), "NAMESPACE_MODE_"))
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", ns.Name, mode, ns.StoreUri, time.UnixMilli(ns.Created).Format("2006-01-02 15:04"))
			}
			return w.Flush()
		},
	}
	f.register(cmd)
	return cmd
}

func nsDeleteCmd() *cobra.Command {
	var f clientFlags
	cmd := &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a namespace and everything in it",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			defer c.Close()
			return c.DeleteNamespace(cmd.Context(), args[0])
		},
	}
	f.register(cmd)
	return cmd
}

func statusCmd() *cobra.Command {
	var f clientFlags
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the namespace service member's role, term and indexes",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			defer c.Close()
			st, err := c.Status(cmd.Context())
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "MEMBER\tROLE\tTERM\tCOMMITTED\tAPPLIED\tLAG\tVERSION")
			fmt.Fprintf(w, "%d\t%s\t%d\t%d\t%d\t%d\t%s\n", st.MemberId, strings.TrimPrefix(st.Role, "State"), st.Term,
				st.CommittedIndex, st.AppliedIndex, st.CommittedIndex-st.AppliedIndex, st.Version)
			return w.Flush()
		},
	}
	f.register(cmd)
	return cmd
}
