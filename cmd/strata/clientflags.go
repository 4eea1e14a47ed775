package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/stratafs/strata/internal/client"
)

// defaultMeta is where clients look for the namespace service.
const defaultMeta = "127.0.0.1:7700"

// metaAddr returns flag, else $STRATA_META, else the default.
func metaAddr(flag string) string {
	if flag != "" {
		return flag
	}
	if env := os.Getenv("STRATA_META"); env != "" {
		return env
	}
	return defaultMeta
}

// clientFlags are the flags of every command that talks to the service.
type clientFlags struct {
	meta string
	ns   string
}

func (f *clientFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.meta, "meta", "", "namespace service address HOST:PORT, or its members' HOST:PORT,... (default $STRATA_META or "+defaultMeta+")")
	cmd.Flags().StringVar(&f.ns, "namespace", "", "namespace of bare paths (default \"default\")")
}

func (f *clientFlags) client() (*client.Client, error) {
	return client.New(client.Config{Meta: metaAddr(f.meta), Namespace: f.ns})
}
