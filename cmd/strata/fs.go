package main

import (
	"github.com/spf13/cobra"
)

func fsCmd() *cobra.Command {
	return &cobra.Command{Use: "fs", Short: "hadoop fs-style client commands"}
}
