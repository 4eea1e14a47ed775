package fsshell

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// command is one of the shell's commands: Hadoop's NAME, USAGE and
// DESCRIPTION fields and its run method.
type command struct {
	name  string // without the dash
	usage string // what follows "-name " in a usage line
	desc  string // the -help text, already wrapped at 80 columns
	run   func(sh *shell, args []string) error
}

// commands holds every command by its dash-prefixed name; see commands.go.
var commands = map[string]*command{}

func register(cs ...*command) {
	for _, c := range cs {
		commands["-"+c.name] = c
	}
}

// lookupCommand finds a command by its name as typed ("-ls").
func lookupCommand(typed string) *command { return commands[typed] }

// usagePrefix starts every usage line, as FsShell's "hadoop fs [generic
// options]".
const usagePrefix = "Usage: strata fs [generic options]"

// genericUsage is the part of "hadoop fs -help" that ToolRunner prints.
const genericUsage = `Generic options supported are:
--meta <host:port>    the namespace service (default $STRATA_META, else 127.0.0.1:7700)
--namespace <name>    the namespace of paths that do not name one with
                      strata://<name>/ (default "default")
--timeout <duration>  how long to wait for the namespace service to accept
                      a first connection, as 10s or 1m (default
                      $STRATA_TIMEOUT, else 3s)

The general command line syntax is:
strata fs [genericOptions] [commandOptions]

Paths are strata://<namespace>/<path>, strata:///<path> (the default
namespace), /<path>, or relative to /user/<user>. Patterns (* ? [abc] [!abc]
{a,b}) are expanded by listing, as Hadoop expands globs.

Exit status: 0 on success, 1 if any path failed (or a -test was false), 255
for a usage error or an unknown command.
`

func sortedCommands() []*command {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]*command, len(names))
	for i, n := range names {
		out[i] = commands[n]
	}
	return out
}

func (c *command) usageLine() string {
	if c.usage == "" {
		return "-" + c.name
	}
	return "-" + c.name + " " + c.usage
}

// printUsage prints the usage of every command (FsShell.printUsage).
func (sh *shell) printUsage(w io.Writer) { printInfo(w, false) }

func printInfo(w io.Writer, withHelp bool) {
	fmt.Fprintln(w, usagePrefix)
	for _, c := range sortedCommands() {
		fmt.Fprintf(w, "\t[%s]\n", c.usageLine())
	}
	if withHelp {
		for _, c := range sortedCommands() {
			fmt.Fprintln(w)
			printInstanceHelp(w, c)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprint(w, genericUsage)
}

func printInstanceUsage(w io.Writer, c *command) {
	fmt.Fprintf(w, "%s %s\n", usagePrefix, c.usageLine())
}

// printInstanceHelp prints "-name usage :" and the description indented by
// two spaces, as Hadoop 3 does.
func printInstanceHelp(w io.Writer, c *command) {
	fmt.Fprintf(w, "%s :\n", c.usageLine())
	for _, line := range strings.Split(strings.Trim(c.desc, "\n"), "\n") {
		if line == "" {
			fmt.Fprintln(w)
			continue
		}
		fmt.Fprintf(w, "  %s\n", line)
	}
}

// runHelp is -help [cmd ...] and runUsage is -usage [cmd ...]: the long or
// short help of the named commands, or of all of them.
func runHelp(sh *shell, args []string) error  { return sh.info(args, true) }
func runUsage(sh *shell, args []string) error { return sh.info(args, false) }

func (sh *shell) info(args []string, withHelp bool) error {
	if len(args) == 0 {
		printInfo(sh.out, withHelp)
		return nil
	}
	for _, a := range args {
		c := lookupCommand("-" + strings.TrimPrefix(a, "-"))
		if c == nil {
			return usagef("`%s': Unknown command", a)
		}
		if withHelp {
			printInstanceHelp(sh.out, c)
		} else {
			printInstanceUsage(sh.out, c)
		}
	}
	return nil
}
