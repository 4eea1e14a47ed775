package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/stratafs/strata/internal/client"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

func memberCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "member",
		Short: "List and change the members of the namespace service's Raft group",
		Long: `List and change the members of the namespace service's Raft group. Changes
need a superuser and go through the leader (the client finds it).

Add a member: first "strata admin member add ID HOST:PORT", then start it
empty: strata meta --member-id ID --listen HOST:PORT --join EXISTING,...
The command returns once the new member caught up and votes.

Replace a failed member: "strata admin member replace OLD NEWID HOST:PORT"
(adds the new member, then removes the old one).`,
	}
	cmd.AddCommand(memberListCmd(), memberAddCmd(), memberRemoveCmd(), memberReplaceCmd(), memberTransferCmd())
	return cmd
}

// memberSubcmd makes a subcommand of "member" taking nargs arguments: it
// runs change with a client and prints the membership change returns (with
// leader marked, if not 0).
func memberSubcmd(use, short string, nargs int, change func(ctx context.Context, c *client.Client, args []string) (members []*pb.Member, leader uint64, err error)) *cobra.Command {
	var f clientFlags
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(nargs),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			defer c.Close()
			members, leader, err := change(cmd.Context(), c, args)
			if err != nil {
				return err
			}
			return printMembers(members, leader)
		},
	}
	f.register(cmd)
	return cmd
}

func memberListCmd() *cobra.Command {
	return memberSubcmd("list", "List the members", 0,
		func(ctx context.Context, c *client.Client, _ []string) ([]*pb.Member, uint64, error) {
			st, err := c.Status(ctx)
			if err != nil {
				return nil, 0, err
			}
			for _, m := range st.Members {
				// Only the leader knows who answers.
				m.Answering = m.Answering || st.MemberId != st.LeaderId
			}
			return st.Members, st.LeaderId, nil
		})
}

func printMembers(members []*pb.Member, leader uint64) error {
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "MEMBER\tADDRESS\tKIND")
	for _, m := range members {
		kind := "voter"
		if m.Learner {
			kind = "learner"
		}
		switch {
		case m.Id == leader:
			kind += " (leader)"
		case leader != 0 && !m.Answering:
			kind += " (not answering the leader)"
		}
		fmt.Fprintf(w, "%d\t%s\t%s\n", m.Id, m.Address, kind)
	}
	return w.Flush()
}

// parseIDs parses member ids.
func parseIDs(args ...string) ([]uint64, error) {
	ids := make([]uint64, len(args))
	for i, s := range args {
		id, err := strconv.ParseUint(s, 10, 64)
		if err != nil || id == 0 {
			return nil, fmt.Errorf("member id %q: not a number above 0", s)
		}
		ids[i] = id
	}
	return ids, nil
}

func memberAddCmd() *cobra.Command {
	var learner bool
	cmd := memberSubcmd("add ID HOST:PORT", "Add a member (then start it with --join)", 2,
		func(ctx context.Context, c *client.Client, args []string) ([]*pb.Member, uint64, error) {
			ids, err := parseIDs(args[0])
			if err != nil {
				return nil, 0, err
			}
			members, err := c.AddMember(ctx, ids[0], args[1], learner)
			return members, 0, err
		})
	cmd.Flags().BoolVar(&learner, "learner", false, "add as a learner that receives the log but does not vote")
	return cmd
}

func memberRemoveCmd() *cobra.Command {
	var force bool
	cmd := memberSubcmd("remove ID", "Remove a member (the leader hands over first if it is the one)", 1,
		func(ctx context.Context, c *client.Client, args []string) ([]*pb.Member, uint64, error) {
			ids, err := parseIDs(args[0])
			if err != nil {
				return nil, 0, err
			}
			members, err := c.RemoveMember(ctx, ids[0], force)
			return members, 0, err
		})
	cmd.Long = `Remove a member from the group. The leader refuses if the voters left that
answer it would not be a majority of them (say, removing a live member of
three while another is down): the group would stop serving until enough of
them came back. --force removes it all the same.`
	cmd.Flags().BoolVar(&force, "force", false, "remove it even if the group would lose its quorum")
	return cmd
}

func memberReplaceCmd() *cobra.Command {
	return memberSubcmd("replace OLD NEWID HOST:PORT", "Add a new member, then remove an old one", 3,
		func(ctx context.Context, c *client.Client, args []string) ([]*pb.Member, uint64, error) {
			ids, err := parseIDs(args[0], args[1])
			if err != nil {
				return nil, 0, err
			}
			if _, err := c.AddMember(ctx, ids[1], args[2], false); err != nil {
				return nil, 0, err
			}
			members, err := c.RemoveMember(ctx, ids[0], false)
			return members, 0, err
		})
}

func memberTransferCmd() *cobra.Command {
	return memberSubcmd("transfer-leader ID", "Make member ID the leader", 1,
		func(ctx context.Context, c *client.Client, args []string) ([]*pb.Member, uint64, error) {
			ids, err := parseIDs(args[0])
			if err != nil {
				return nil, 0, err
			}
			if err := c.TransferLeader(ctx, ids[0]); err != nil {
				return nil, 0, err
			}
			st, err := c.Status(ctx)
			return st.GetMembers(), 0, err
		})
}
