package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/stratafs/strata/internal/client"
)

// quotaCmd is `strata admin quota`: HDFS's dfsadmin -setQuota,
// -setSpaceQuota, -clrQuota and -clrSpaceQuota, for a superuser.
func quotaCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "quota", Short: "Set or clear the name and space quotas of directories",
		Long: `A directory's name quota limits the names in its tree (the directory itself
and every file and directory below it); its space quota the bytes of the files
below it, each counted once (HDFS counts them times their replication). Every
create, mkdir, rename, append and write that would go past a quota is refused
(HDFS's NSQuotaExceededException or DSQuotaExceededException; EDQUOT through a
mount). A quota may be set below what the directory holds already: only what
would grow it further is refused. 'strata fs -count -q PATH' shows quotas and
what remains of them. Only a superuser sets quotas, and only in a block-mode
namespace.`}
	cmd.AddCommand(quotaSetCmd(), quotaClearCmd())
	return cmd
}

func quotaSetCmd() *cobra.Command {
	var f clientFlags
	var names, space string
	cmd := &cobra.Command{
		Use:   "set [--names N] [--space SIZE] PATH...",
		Short: "Set the quotas of directories",
		Long: `Set the name quota (--names, a count) and/or the space quota (--space, bytes:
4096, 10g, 1.5TiB) of each directory; a quota not given is left as it is.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if names == "" && space == "" {
				return usagef("give --names, --space or both")
			}
			n, err := quotaValue(names, func(s string) (int64, error) { return strconv.ParseInt(s, 10, 64) })
			if err != nil || n == 0 {
				return usagef("--names %q: a quota is a number of names, at least 1", names)
			}
			s, err := quotaValue(space, parseQuotaSize)
			if err != nil {
				return usagef("--space %q: %v", space, err)
			}
			return setQuotas(cmd, &f, args, n, s)
		},
	}
	cmd.Flags().StringVar(&names, "names", "", "the name quota: how many files and directories the tree may hold, itself included")
	cmd.Flags().StringVar(&space, "space", "", "the space quota: how many bytes its files may hold")
	f.register(cmd)
	return cmd
}

func quotaClearCmd() *cobra.Command {
	var f clientFlags
	var names, space bool
	cmd := &cobra.Command{
		Use:   "clear [--names] [--space] PATH...",
		Short: "Clear the quotas of directories",
		Long:  `Clear the name quota (--names), the space quota (--space), or both (neither flag).`,
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, s := int64(client.NoQuota), int64(client.NoQuota)
			if names != space {
				if !names {
					n = client.QuotaDontSet
				}
				if !space {
					s = client.QuotaDontSet
				}
			}
			return setQuotas(cmd, &f, args, n, s)
		},
	}
	cmd.Flags().BoolVar(&names, "names", false, "clear the name quota")
	cmd.Flags().BoolVar(&space, "space", false, "clear the space quota")
	f.register(cmd)
	return cmd
}

// quotaValue parses a flag's quota: not given leaves the quota as it is.
func quotaValue(s string, parse func(string) (int64, error)) (int64, error) {
	if s == "" {
		return client.QuotaDontSet, nil
	}
	v, err := parse(s)
	if err == nil && v < 0 {
		err = errors.New("a quota is not negative")
	}
	return v, err
}

// parseQuotaSize reads a size as dfsadmin -setSpaceQuota does (10g, 1t:
// binary prefixes in either case) or as the other commands do (10GiB).
func parseQuotaSize(s string) (int64, error) {
	if n := len(s); n > 0 && strings.ContainsRune("kmgtpe", rune(s[n-1]|0x20)) && s[n-1] != 'B' {
		mult := int64(1) << (10 * (strings.IndexByte("kmgtpe", s[n-1]|0x20) + 1))
		v, err := strconv.ParseFloat(s[:n-1], 64)
		if err != nil || v < 0 {
			return 0, fmt.Errorf("not a size")
		}
		return int64(v * float64(mult)), nil
	}
	return parseBytes(s)
}

func setQuotas(cmd *cobra.Command, f *clientFlags, paths []string, names, space int64) error {
	c, err := f.client()
	if err != nil {
		return err
	}
	defer c.Close()
	var failed error
	for _, p := range paths {
		if err := c.SetQuota(cmd.Context(), p, names, space); err != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "quota: %v\n", err)
			failed = errors.New("some quotas were not set")
		}
	}
	return failed
}
