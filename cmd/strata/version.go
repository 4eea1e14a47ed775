package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/stratafs/strata/internal/metaserver"
)

func versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, the source revision and the Go version of this binary",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprint(cmd.OutOrStdout(), versionText())
			return err
		},
	}
}

// revision is the source revision, set by the linker ("make build" sets
// git's: -X main.revision=HASH, with "-modified" when the tree had changes
// not committed). Go's own stamp (vcs.revision) stands in when it is not
// set; it is missing from builds in a git worktree and with -buildvcs=false.
var revision string

// versionText says what this binary is: the version the linker set (else
// the module's, when installed as one), the source revision and its time,
// and the Go that built it.
func versionText() string { return readStamp(revision).String() }

// stamp is what a binary knows of its making.
type stamp struct {
	version, revision, at string // at: when the revision was committed
	modified              bool   // the tree had changes not committed
}

// readStamp reads the build's stamp; linked, if set, is the revision the
// linker set.
func readStamp(linked string) stamp {
	st := stamp{version: metaserver.Version}
	st.revision, st.modified = strings.CutSuffix(linked, "-modified")
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return st
	}
	if v := info.Main.Version; st.version == "dev" && v != "" && v != "(devel)" {
		st.version = v
	}
	if st.revision != "" {
		return st
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			st.revision = s.Value
		case "vcs.time":
			st.at = s.Value
		case "vcs.modified":
			st.modified = s.Value == "true"
		}
	}
	return st
}

func (st stamp) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "strata %s\n", st.version)
	switch {
	case st.revision == "":
		b.WriteString("revision: unknown (built without version control information)\n")
	case st.modified:
		fmt.Fprintf(&b, "revision: %s (with changes not committed)\n", st.revision)
	default:
		fmt.Fprintf(&b, "revision: %s\n", st.revision)
	}
	if st.at != "" {
		fmt.Fprintf(&b, "committed: %s\n", st.at)
	}
	fmt.Fprintf(&b, "go: %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return b.String()
}
