package fsshell

import (
	"errors"
	"fmt"
	"strings"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/fserr"
)

// -storagepolicies: what `hdfs storagepolicies` (Hadoop's
// StoragePolicyAdmin) does, with its subcommands, words and exit
// statuses, over Strata's storage policies.

func init() {
	register(&command{name: "storagepolicies",
		usage: "-listPolicies | -setStoragePolicy -path <path> -policy <policy> | -getStoragePolicy -path <path> | -unsetStoragePolicy -path <path>",
		run:   runStoragePolicies, desc: `
Lists the storage policies, and sets, shows and unsets the policy of a file
or directory, as "hdfs storagepolicies" does. A file or directory without a
policy takes its directory's; WARM is the default.

-listPolicies        List every storage policy.
-setStoragePolicy    Set the policy of <path> (write permission needed).
-getStoragePolicy    Show the policy of <path>: its own or its directory's.
-unsetStoragePolicy  Unset the policy of <path>.

HOT    blocks pinned in the workers' caches: loaded on write, never evicted
WARM   blocks cached as they are written and read (the default)
COLD   blocks written to the bucket only, not kept in the cache
IA     blocks written in the bucket's STANDARD_IA storage class (s3:// only)
AR     blocks written in the bucket's GLACIER_IR storage class (s3:// only)`})
}

// Exit statuses of StoragePolicyAdmin: usage (1) and a failed call (2).
const (
	policyUsage  = 1
	policyFailed = 2
)

func runStoragePolicies(sh *shell, args []string) error {
	if len(args) == 0 {
		return usagef("a subcommand is needed: -listPolicies, -setStoragePolicy, -getStoragePolicy or -unsetStoragePolicy")
	}
	sub, rest := args[0], args[1:]
	run := map[string]func(*shell, []string) int{"-listPolicies": listPolicies, "-setStoragePolicy": setPolicy,
		"-getStoragePolicy": getPolicy, "-unsetStoragePolicy": unsetPolicy}[sub]
	if run == nil {
		return usagef("Can't understand command '%s'", sub)
	}
	if err := sh.connect(); err != nil {
		return err
	}
	sh.exitCode = run(sh, rest)
	return nil
}

// policyString is how the Java client's policies print
// (BlockStoragePolicySpi.toString), as `hdfs storagepolicies` shows them.
func policyString(p client.StoragePolicy) string {
	return fmt.Sprintf("StoragePolicy{%s:%d, %s}", p.Name, p.ID, p.Description)
}

func listPolicies(sh *shell, _ []string) int {
	all, err := sh.fs.StoragePolicies(sh.ctx)
	if err != nil {
		return sh.policyFailed(err)
	}
	sh.printf("Block Storage Policies:\n")
	for _, p := range all {
		sh.printf("\t%s\n", policyString(p))
	}
	return 0
}

func setPolicy(sh *shell, args []string) int {
	path, args, ok, _ := popOptionWithArgument("-path", args)
	if !ok {
		return sh.policyUsage("Please specify the path for setting the storage policy.\nUsage: " +
			"[-setStoragePolicy -path <path> -policy <policy>]")
	}
	policy, _, ok, _ := popOptionWithArgument("-policy", args)
	if !ok {
		return sh.policyUsage("Please specify the policy name.\nUsage: [-setStoragePolicy -path <path> -policy <policy>]")
	}
	p, code := sh.policyPath(path)
	if p == nil {
		return code
	}
	if err := sh.fs.SetStoragePolicy(sh.ctx, p.uri(), policy); err != nil {
		return sh.policyFailed(err)
	}
	sh.printf("Set storage policy %s on %s\n", policy, path)
	return 0
}

func getPolicy(sh *shell, args []string) int {
	path, _, ok, _ := popOptionWithArgument("-path", args)
	if !ok {
		return sh.policyUsage("Please specify the path with -path.\nUsage:[-getStoragePolicy -path <path>]")
	}
	p, code := sh.policyPath(path)
	if p == nil {
		return code
	}
	pol, err := sh.fs.StoragePolicy(sh.ctx, p.uri())
	if errors.Is(err, fserr.ErrNotFound) {
		fmt.Fprintf(sh.errw, "File/Directory does not exist: %s\n", path)
		return policyFailed
	}
	if err != nil {
		return sh.policyFailed(err)
	}
	sh.printf("The storage policy of %s:\n%s\n", path, policyString(pol))
	return 0
}

func unsetPolicy(sh *shell, args []string) int {
	path, _, ok, _ := popOptionWithArgument("-path", args)
	if !ok {
		return sh.policyUsage("Please specify the path from which the storage policy will be unset.\nUsage: " +
			"[-unsetStoragePolicy -path <path>]")
	}
	p, code := sh.policyPath(path)
	if p == nil {
		return code
	}
	if err := sh.fs.SetStoragePolicy(sh.ctx, p.uri(), ""); err != nil {
		return sh.policyFailed(err)
	}
	sh.printf("Unset storage policy from %s\n", path)
	return 0
}

// policyPath resolves a -path argument (no patterns, as StoragePolicyAdmin
// takes a Path).
func (sh *shell) policyPath(arg string) (*pathData, int) {
	p, _, err := sh.resolve(arg)
	if err != nil {
		return nil, sh.policyFailed(err)
	}
	return p, 0
}

func (sh *shell) policyUsage(msg string) int {
	_ = sh.out.Flush()
	fmt.Fprintln(sh.errw, msg)
	return policyUsage
}

// policyFailed says why a call failed as AdminHelper.prettifyException
// does, naming the exception the Java client throws for it, and returns
// StoragePolicyAdmin's status for it.
func (sh *shell) policyFailed(err error) int {
	_ = sh.out.Flush()
	reason := detail(err)
	class := "IOException"
	switch {
	case errors.Is(err, fserr.ErrInvalidArgument):
		class = "HadoopIllegalArgumentException"
	case errors.Is(err, fserr.ErrNotFound):
		class = "FileNotFoundException"
	case errors.Is(err, fserr.ErrPermission):
		class = "AccessControlException"
	case errors.Is(err, fserr.ErrUnsupported):
		class = "UnsupportedOperationException"
	}
	reason, _, _ = strings.Cut(reason, "\n")
	fmt.Fprintf(sh.errw, "%s: %s\n", class, reason)
	return policyFailed
}
