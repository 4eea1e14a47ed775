package fsshell

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/fserr"
)

// Exit statuses, as FsShell returns them.
const (
	exitOK    = 0
	exitError = 1   // some path failed, or a -test was false
	exitUsage = 255 // FsShell's -1: a usage error or an unknown command
)

// Run runs one command line, such as ["-ls", "-R", "/"], writing what the
// command prints to stdout and its diagnostics to stderr, and returns the
// exit status. newClient is called at most once, and only by commands that
// reach the file system, so that -help and usage errors need no service.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, newClient func() (*client.Client, error)) int {
	sh := newShell(ctx, stdout, stderr, newClient)
	defer sh.close()
	return sh.run(args)
}

// shell is the state of one command run: Hadoop's Command instance.
type shell struct {
	ctx       context.Context
	out       *bufio.Writer
	errw      io.Writer
	stdin     io.Reader
	newClient func() (*client.Client, error)
	fs        *client.Client
	loc       *time.Location   // time zone of -ls dates and -touch -t
	now       func() time.Time // the clock of -touch and -touchz

	// pause waits between the polls of -tail -f; it fails when ctx ends.
	pause func(ctx context.Context, d time.Duration) error
	// isTerminal says whether a progress bar may be drawn on w.
	isTerminal func(w io.Writer) bool
	// progressMin is the smallest transfer drawn with a progress bar; 0
	// turns the bars off.
	progressMin int64
	copyBuf     []byte // the one buffer of every transfer, made once

	name      string      // the command's name without its dash; prefixes messages
	numErrors int         // errors displayed; any makes the exit status 1
	exitCode  int         // the status without errors (-test sets 1)
	usage     *usageError // a usage error met while processing paths

	trash *time.Duration // the service's trash interval, once asked (trash.go)
	// unreachable is the last message that said the service could not be
	// reached.
	unreachable string
	// notedLoaded: the cache-mode note of -du and -count was said.
	notedLoaded bool
}

func newShell(ctx context.Context, stdout, stderr io.Writer, newClient func() (*client.Client, error)) *shell {
	sh := &shell{ctx: ctx, out: bufio.NewWriterSize(stdout, 64<<10), errw: stderr, stdin: os.Stdin,
		newClient: newClient, loc: time.Local, now: time.Now,
		pause: sleepCtx, isTerminal: isTerminal, progressMin: defaultProgressMin}
	if os.Getenv(noProgressEnv) != "" {
		sh.progressMin = 0
	}
	return sh
}

func (sh *shell) close() {
	_ = sh.out.Flush()
	if sh.fs != nil {
		_ = sh.fs.Close()
	}
}

func (sh *shell) run(args []string) int {
	if len(args) == 0 {
		sh.printUsage(sh.errw)
		return exitUsage
	}
	typed := args[0]
	c := lookupCommand(typed)
	if c == nil {
		sh.usageFailure(typed, nil, "Unknown command")
		return exitUsage
	}
	sh.name = c.name
	err := c.run(sh, args[1:])
	if ue := (*usageError)(nil); errors.As(err, &ue) || sh.usage != nil {
		if ue == nil {
			ue = sh.usage
		}
		sh.usageFailure(typed, c, ue.msg)
		return exitUsage
	}
	if err != nil {
		sh.fail(err)
	}
	if sh.numErrors > 0 {
		return exitError
	}
	return sh.exitCode
}

// connect makes the client, once. It does not dial: an argument the
// command refuses is refused before anything reaches the service, as in
// Hadoop.
func (sh *shell) connect() error {
	if sh.fs != nil {
		return nil
	}
	fs, err := sh.newClient()
	if err != nil {
		return err
	}
	sh.fs = fs
	return nil
}

// user is the user the client acts as.
func (sh *shell) user() string { return sh.fs.User() }

// home is the directory relative paths are resolved against, as Hadoop's
// FileSystem.getHomeDirectory.
func (sh *shell) home() string { return "/user/" + sh.user() }

// printf writes to the command's output.
func (sh *shell) printf(format string, args ...any) {
	fmt.Fprintf(sh.out, format, args...)
}

// fail displays err as Command.displayError does ("ls: message") and counts
// it; only the first line of a message is shown. A service that cannot be
// reached is said once, not once per path.
func (sh *shell) fail(err error) {
	sh.numErrors++
	msg := message(err)
	if errors.Is(err, fserr.ErrUnavailable) {
		if msg == sh.unreachable {
			return
		}
		sh.unreachable = msg
	}
	sh.warn(msg)
}

// warn displays a message without counting an error.
func (sh *shell) warn(msg string) {
	_ = sh.out.Flush()
	msg, _, _ = strings.Cut(msg, "\n")
	fmt.Fprintf(sh.errw, "%s: %s\n", sh.name, msg)
}

// usageFailure reports a usage error the way FsShell.run does: the message
// prefixed by the command as typed, the whole usage, then the command's.
func (sh *shell) usageFailure(typed string, c *command, msg string) {
	_ = sh.out.Flush()
	for _, line := range strings.Split(msg, "\n") {
		fmt.Fprintf(sh.errw, "%s: %s\n", typed, line)
		if !strings.HasPrefix(typed, "-") && lookupCommand("-"+typed) != nil {
			fmt.Fprintf(sh.errw, "Did you mean -%s?  This command begins with a dash.\n", typed)
		}
	}
	sh.printUsage(sh.errw)
	if c != nil {
		printInstanceUsage(sh.errw, c)
	}
}

// usageError is Hadoop's IllegalArgumentException: bad options or
// arguments, reported with the usage and exit status 255.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}
