// Package fsshell is "strata fs": a command-line shell over the Go client
// that behaves like Hadoop 3's FsShell ("hadoop fs"), so that a Hadoop user
// finds the same commands, options, output formats, messages and exit codes.
//
// It is not a POSIX shell and holds no file system semantics of its own:
// every decision about the namespace is the service's, reached through
// internal/client. What it owns is Hadoop's presentation: option parsing
// (single-dash options, checked like CommandFormat), path forms
// (strata://ns/p, strata:///p, /p, and relative paths under /user/<user>),
// glob expansion by listing, the ls/du/count/stat layouts, and the messages
// of FsShell's PathIOExceptions ("ls: `/x': No such file or directory").
//
// Content is streamed, one buffer at a time, whatever a file's size: -put,
// -get, -cp, -cat and -tail never hold a file in memory. Large transfers
// draw a progress bar on standard error when it is a terminal, the one
// thing Hadoop does not print (progress.go).
//
// Exit status follows FsShell: 0 on success, 1 when a path failed (and for a
// false -test), 255 (Java's -1) for usage errors and unknown commands.
//
// Output formats are pure functions (format.go) tested without a server;
// the commands are tested against a real namespace service on loopback.
package fsshell
