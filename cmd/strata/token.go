package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/stratafs/strata/internal/statemachine"
	"github.com/stratafs/strata/internal/token"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

func tokenCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "token", Short: "Issue, renew, revoke and show tokens",
		Long: `Tokens prove who a client is (docs/security.md). The namespace service signs
them; a superuser issues them for any user, and a client sends its own with
every call. ` + tokenHelpText + `.`}
	cmd.AddCommand(tokenCreateCmd(), tokenRenewCmd(), tokenRevokeCmd(), tokenShowCmd())
	return cmd
}

func tokenCreateCmd() *cobra.Command {
	var f clientFlags
	var user, out string
	var groups []string
	var ttl, maxLife time.Duration
	var notRenewable bool
	cmd := &cobra.Command{
		Use:   "create --user NAME [--groups G1,G2] [--ttl 24h]",
		Short: "Issue a token for a user (superuser only) and print it",
		Long: `Issue a token for --user, in --groups, and print it on standard output (or
write it, readable by its owner only, to --out). Give it to the user as
$STRATA_TOKEN or in ~/.strata/token; to the Hadoop client as fs.strata.token
or fs.strata.token.file. It is valid for --ttl, and each renewal extends it
by as much, up to --max-lifetime after its issue; a --ttl longer than
--max-lifetime is refused (no renewal, and no token, outlives it).

A user's or group's name is 1 to 256 bytes of printable characters: no
white space, no control characters, no ':' and no ','.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkTokenFlags(user, groups, ttl, maxLife); err != nil {
				return err
			}
			c, err := f.client()
			if err != nil {
				return err
			}
			defer c.Close()
			r, err := c.CreateToken(cmd.Context(), user, groups, ttl, maxLife, !notRenewable)
			if err != nil {
				return err
			}
			fmt.Fprintln(os.Stderr, describeToken(r.GetIdentifier()))
			if out != "" {
				return token.WriteFile(out, r.GetToken())
			}
			fmt.Println(r.GetToken())
			return nil
		},
	}
	cmd.Flags().StringVar(&user, "user", "", "the user the token proves")
	cmd.Flags().StringSliceVar(&groups, "groups", nil, "the user's groups, comma-separated")
	cmd.Flags().DurationVar(&ttl, "ttl", 0, "how long it is valid before it must be renewed, at most --max-lifetime "+
		"(default 24h, or --max-lifetime if shorter)")
	cmd.Flags().DurationVar(&maxLife, "max-lifetime", 0, "how long after its issue renewals may extend it (default 168h)")
	cmd.Flags().BoolVar(&notRenewable, "not-renewable", false, "a token that expires after --ttl whatever happens")
	cmd.Flags().StringVar(&out, "out", "", "write the token to this file instead of printing it")
	f.register(cmd)
	return cmd
}

// checkTokenFlags checks token create's flags as the service will
// (token.CheckName, token.Lifetimes), to name the flag that is wrong.
func checkTokenFlags(user string, groups []string, ttl, maxLife time.Duration) error {
	if user == "" {
		return usagef("--user is required")
	}
	if err := token.CheckName(user); err != nil {
		return usagef("--user: %v", err)
	}
	for _, g := range groups {
		if err := token.CheckName(g); err != nil {
			return usagef("--groups: %v", err)
		}
	}
	if _, _, err := token.Lifetimes(ttl, maxLife); err != nil {
		return usagef("--ttl and --max-lifetime: %v", err)
	}
	return nil
}

func tokenRenewCmd() *cobra.Command {
	var f clientFlags
	cmd := &cobra.Command{
		Use:   "renew [TOKEN]",
		Short: "Extend a token by its lifetime (your own, or any as a superuser)",
		Long: `Renew TOKEN, or the token this client uses: it is valid for its lifetime
again, up to its max lifetime. Only a token that has not expired (nor been
revoked) can be renewed: past its expiry, a superuser issues a new one.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			defer c.Close()
			tok := ""
			if len(args) == 1 {
				tok = args[0]
			}
			exp, err := c.RenewToken(cmd.Context(), tok)
			if err != nil {
				return err
			}
			fmt.Println("valid until", statemachine.Stamp(exp.UnixMilli()))
			return nil
		},
	}
	f.register(cmd)
	return cmd
}

func tokenRevokeCmd() *cobra.Command {
	var f clientFlags
	cmd := &cobra.Command{
		Use:   "revoke ID|TOKEN",
		Short: "Revoke a token (your own, or any as a superuser): every member refuses it from then on",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var id uint64
			var tok string
			if strings.HasPrefix(args[0], "st1.") {
				tok = args[0]
			} else {
				var err error
				if id, err = strconv.ParseUint(args[0], 10, 64); err != nil || id == 0 {
					return usagef("%q is neither a token id nor a token", args[0])
				}
			}
			c, err := f.client()
			if err != nil {
				return err
			}
			defer c.Close()
			revoked, err := c.RevokeToken(cmd.Context(), id, tok)
			if err != nil {
				return err
			}
			if !revoked {
				fmt.Println("it was revoked already")
			}
			return nil
		},
	}
	f.register(cmd)
	return cmd
}

func tokenShowCmd() *cobra.Command {
	var f clientFlags
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Show who the service takes you for, and your token",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			defer c.Close()
			r, err := c.WhoAmI(cmd.Context())
			if err != nil {
				return err
			}
			fmt.Printf("user %s, groups [%s], superuser %v\n", r.GetUser(), strings.Join(r.GetGroups(), ","), r.GetSuperuser())
			fmt.Println(describeToken(r.GetToken()))
			return nil
		},
	}
	f.register(cmd)
	return cmd
}

// describeToken says what a token is, in one line.
func describeToken(id *pb.TokenIdentifier) string {
	renew := "renewable until " + statemachine.Stamp(id.GetMaxDate())
	if !id.GetRenewable() {
		renew = "not renewable"
	}
	return fmt.Sprintf("token %d of %s [%s] issued %s, valid until %s, %s", id.GetId(), id.GetUser(),
		strings.Join(id.GetGroups(), ","), statemachine.Stamp(id.GetIssued()), statemachine.Stamp(id.GetExpires()), renew)
}
