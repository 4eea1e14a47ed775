package main

import (
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

func memberListCmd() *cobra.Command {
	var f clientFlags
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the members",
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
			return printMembers(st.Members, st.LeaderId)
		},
	}
	f.register(cmd)
	return cmd
}

func printMembers(members []*pb.Member, leader uint64) error {
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "MEMBER\tADDRESS\tKIND")
	for _, m := range members {
		kind := "voter"
		if m.Learner {
			kind = "learner"
		}
		if m.Id == leader {
			kind += " (leader)"
		}
		fmt.Fprintf(w, "%d\t%s\t%s\n", m.Id, m.Address, kind)
	}
	return w.Flush()
}

func parseID(s string) (uint64, error) {
	id, err := strconv.ParseUint(s, 10, 64)
	if err != nil || id == 0 {
		return 0, fmt.Errorf("member id %q: not a number above 0", s)
	}
	return id, nil
}

// memberChange runs fn with a client and prints the membership it returns.
func memberChange(cmd *cobra.Command, f *clientFlags, fn func(c *client.Client) ([]*pb.Member, error)) error {
	c, err := f.client()
	if err != nil {
		return err
	}
	defer c.Close()
	members, err := fn(c)
	if err != nil {
		return err
	}
	return printMembers(members, 0)
}

func memberAddCmd() *cobra.Command {
	var f clientFlags
	var learner bool
	cmd := &cobra.Command{
		Use:   "add ID HOST:PORT",
		Short: "Add a member (then start it with --join)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseID(args[0])
			if err != nil {
				return err
			}
			return memberChange(cmd, &f, func(c *client.Client) ([]*pb.Member, error) {
				return c.AddMember(cmd.Context(), id, args[1], learner)
			})
		},
	}
	cmd.Flags().BoolVar(&learner, "learner", false, "add as a learner that receives the log but does not vote")
	f.register(cmd)
	return cmd
}

func memberRemoveCmd() *cobra.Command {
	var f clientFlags
	cmd := &cobra.Command{
		Use:   "remove ID",
		Short: "Remove a member (the leader hands over first if it is the one)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseID(args[0])
			if err != nil {
				return err
			}
			return memberChange(cmd, &f, func(c *client.Client) ([]*pb.Member, error) {
				return c.RemoveMember(cmd.Context(), id)
			})
		},
	}
	f.register(cmd)
	return cmd
}

func memberReplaceCmd() *cobra.Command {
	var f clientFlags
	cmd := &cobra.Command{
		Use:   "replace OLD NEWID HOST:PORT",
		Short: "Add a new member, then remove an old one",
		Args:  cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			old, err := parseID(args[0])
			if err != nil {
				return err
			}
			id, err := parseID(args[1])
			if err != nil {
				return err
			}
			return memberChange(cmd, &f, func(c *client.Client) ([]*pb.Member, error) {
				if _, err := c.AddMember(cmd.Context(), id, args[2], false); err != nil {
					return nil, err
				}
				return c.RemoveMember(cmd.Context(), old)
			})
		},
	}
	f.register(cmd)
	return cmd
}

func memberTransferCmd() *cobra.Command {
	var f clientFlags
	cmd := &cobra.Command{
		Use:   "transfer-leader ID",
		Short: "Make member ID the leader",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseID(args[0])
			if err != nil {
				return err
			}
			return memberChange(cmd, &f, func(c *client.Client) ([]*pb.Member, error) {
				if err := c.TransferLeader(cmd.Context(), id); err != nil {
					return nil, err
				}
				st, err := c.Status(cmd.Context())
				return st.GetMembers(), err
			})
		},
	}
	f.register(cmd)
	return cmd
}
