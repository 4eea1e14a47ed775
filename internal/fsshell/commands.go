package fsshell

// The commands, their usage and their help, in Hadoop 3's words where
// Strata behaves as Hadoop does and in our own where it does not.
func init() {
	register(
		&command{name: "appendToFile", usage: "<localsrc> ... <dst>", run: runAppendToFile, desc: `
Appends the contents of all the given local files to the given dst file. The
dst file will be created if it does not exist. If <localSrc> is -, then the
input is read from stdin.

The appended bytes become visible together when the command ends; a file of
a cache-mode namespace (one object in its bucket) cannot be appended to.`},
		&command{name: "cat", usage: "[-ignoreCrc] <src> ...", run: runCat, desc: `
Fetch all files that match the file pattern <src> and display their content on
stdout.

-ignoreCrc  accepted for compatibility; Strata verifies every read anyway.`},
		&command{name: "chgrp", usage: "[-R] GROUP PATH...", run: runChgrp, desc: `
This is equivalent to -chown ... :GROUP ...`},
		&command{name: "chmod", usage: "[-R] <MODE[,MODE]... | OCTALMODE> PATH...", run: runChmod, desc: `
Changes permissions of a file. This works similar to the shell's chmod command
with a few exceptions.

-R           modifies the files recursively. This is the only option currently
             supported.
<MODE>       Mode is the same as mode used for the shell's command. The only
             letters recognized are 'rwxXt', e.g. +t,a+r,g-w,+rwx,o=r.
<OCTALMODE>  Mode specifed in 3 or 4 digits. If 4 digits, the first may be 1 or
             0 to turn the sticky bit on or off, respectively.  Unlike the
             shell command, it is not possible to specify only part of the
             mode, e.g. 754 is same as u=rwx,g=rx,o=r.

If none of 'augo' is specified, 'a' is assumed and unlike the shell command, no
umask is applied.`},
		&command{name: "chown", usage: "[-R] [OWNER][:[GROUP]] PATH...", run: runChown, desc: `
Changes owner and group of a file. This is similar to the shell's chown command
with a few exceptions.

-R  modifies the files recursively. This is the only option currently
    supported.

If only the owner or group is specified, then only the owner or group is
modified. The owner and group names may only consist of digits, alphabet, and
any of [-_./@a-zA-Z0-9]. The names are case sensitive. Only a superuser may
change the owner; the owner may change the group to one of its own groups.`},
		copyFromLocalCmd("copyFromLocal", "Copy files from the local file system into fs. Identical to the -put command."),
		copyToLocalCmd("copyToLocal", "Identical to the -get command."),
		&command{name: "count", usage: "[-q] [-h] [-v] [-u] [-x] <path> ...", run: runCount, desc: `
Count the number of directories, files and bytes under the paths
that match the specified file pattern.  The output columns are:
DIR_COUNT FILE_COUNT CONTENT_SIZE PATHNAME
or, with the -q option:
QUOTA REM_QUOTA SPACE_QUOTA REM_SPACE_QUOTA
      DIR_COUNT FILE_COUNT CONTENT_SIZE PATHNAME
The -h option shows file sizes in human readable format.
The -v option displays a header line.
The -x option excludes snapshots from being calculated (Strata has none).
The -u option shows the quota and
the usage against the quota without the detailed content summary.
Quotas are set with 'strata admin quota'; a space quota counts each byte once
(HDFS counts it times its replication).
The counts come from aggregates the service keeps, without walking the tree.`},
		&command{name: "cp", usage: "[-f] [-p | -p[topax]] [-d] <src> ... <dst>", run: runCp, desc: `
Copy files that match the file pattern <src> to a destination.  When copying
multiple files, the destination must be a directory. Directories are copied
recursively; the copy can go to another namespace.
Flags :

-p[topax]  Preserve file attributes [topx] (timestamps, ownership, permission,
           ACL, XAttr). If -p is specified with no arg, then preserves
           timestamps, ownership, permission. If -pa is specified, then
           preserves permission also because ACL is a super-set of
           permission. (Strata's -cp does not copy ACLs and XAttrs yet: -pa
           preserves the permission and -px nothing.)
-f         Overwrite the destination if it already exists.
-d         Skip creation of temporary file(<dst>._COPYING_).
` + progressNote},
		&command{name: "du", usage: "[-s] [-h] [-v] [-x] <path> ...", run: runDu, desc: `
Show the amount of space, in bytes, used by the files that match the specified
file pattern. The following flags are optional:

-s  Rather than showing the size of each individual file that matches the
    pattern, shows the total (summary) size.
-h  Formats the sizes of files in a human-readable fashion rather than a number
    of bytes.
-v  option displays a header line.
-x  Excludes snapshots from being counted (Strata has none).

Note that, even without the -s option, this only shows size summaries one level
deep into a directory.

The output is in the form
	size	disk space consumed	name(full path)`},
		copyToLocalCmd("get", `Copy files that match the file pattern <src> to the local name.  <src> is kept.
When copying multiple files, the destination must be a directory. Passing -f
overwrites the destination if it already exists and -p preserves access and
modification times, ownership and the mode.`),
		&command{name: "expunge", usage: "[-immediate] [-fs <path>]", run: runExpunge, desc: `
Delete files from the trash that are older than the retention threshold: in
the user's trash, /user/<user>/.Trash (in the namespace of -fs's path, or the
default one), delete the checkpoints older than the trash interval and make
Current a checkpoint, as the service does on its own every interval (an hour
at most).

-immediate  delete everything in the trash now.`},
		&command{name: "help", usage: "[cmd ...]", run: runHelp, desc: `
Displays help for given command or all commands if none is specified.`},
		&command{name: "ls", usage: "[-C] [-d] [-h] [-q] [-R] [-t] [-S] [-r] [-u] [<path> ...]", run: runLs, desc: `
List the contents that match the specified file pattern. If path is not
specified, the contents of /user/<currentUser> will be listed. For a directory a
list of its direct children is returned (unless -d option is specified).

Directory entries are of the form:
	permissions - userId groupId sizeOfDirectory(in bytes)
modificationDate(yyyy-MM-dd HH:mm) directoryName

and file entries are of the form:
	permissions numberOfReplicas userId groupId sizeOfFile(in bytes)
modificationDate(yyyy-MM-dd HH:mm) fileName

  -C  Display the paths of files and directories only.
  -d  Directories are listed as plain files.
  -h  Formats the sizes of files in a human-readable fashion
      rather than a number of bytes.
  -q  Print ? instead of non-printable characters (-ls always does, so
      that every entry is one line; -q is accepted as in Hadoop).
  -R  Recursively list the contents of directories (the first pages of
      up to 8 directories are fetched ahead of the walk, so a page may
      miss a change made while the listing runs).
  -t  Sort files by modification time (most recent first).
  -S  Sort files by size.
  -r  Reverse the order of the sort.
  -u  Use time of last access instead of modification for
      display and sorting.`},
		&command{name: "mkdir", usage: "[-p] <path> ...", run: runMkdir, desc: `
Create a directory in specified location.

-p  Do not fail if the directory already exists, and create missing parents.`},
		&command{name: "mv", usage: "<src> ... <dst>", run: runMv, desc: `
Move files that match the specified file pattern <src> to a destination <dst>.
When moving multiple files, the destination must be a directory. A move is one
atomic rename in the namespace service, whatever the size of the tree; moving
between namespaces is not possible.`},
		copyFromLocalCmd("put", "Copy files from the local file system into fs."),
		&command{name: "rm", usage: "[-f] [-r|-R] [-skipTrash] <src> ...", run: runRm, desc: `
Delete all files that match the specified file pattern. Equivalent to the Unix
command "rm <src>"

-f          If the file does not exist, do not display a diagnostic message or
            modify the exit status to reflect an error.
-[rR]       Recursively deletes directories.
-skipTrash  option bypasses trash, if enabled, and immediately deletes <src>.

While the service's trash is on (strata meta --trash-interval, a day by
default; 0 turns it off), each <src> is moved to /user/<user>/.Trash/Current
in its namespace instead, and the service deletes it once the interval is
over. A path in the trash already is deleted at once.`},
		&command{name: "rmdir", usage: "[--ignore-fail-on-non-empty] <dir> ...", run: runRmdir, desc: `
Removes the directory entry specified by each directory argument, provided it is
empty.`},
		&command{name: "stat", usage: "[format] <path> ...", run: runStat, desc: `
Print statistics about the file/directory at <path>
in the specified format. Format accepts permissions in
octal (%a) and symbolic (%A), filesize in
bytes (%b), type (%F), group name of owner (%g),
name (%n), block size (%o), replication (%r), user name
of owner (%u), access date (%x, %X).
modification date (%y, %Y).
%x and %y show UTC date as "yyyy-MM-dd HH:mm:ss" and
%X and %Y show milliseconds since January 1, 1970 UTC.
If the format is not specified, %y is used by default.`},
		&command{name: "tail", usage: "[-f] [-s <sleep interval>] <file>", run: runTail, desc: `
Show the last 1KB of the file.

-f  Shows appended data as the file grows. Strata files are written once, so
    the file grows when a longer one replaces it. Follows until interrupted.
-s  With -f , defines the sleep interval between iteration in milliseconds
    (default 1000; Hadoop's is 5000; at least 100: a shorter one is raised
    to it).`},
		&command{name: "test", usage: "-[defswrz] <path>", run: runTest, desc: `
Answer various questions about <path>, with result via exit status.
  -d  return 0 if <path> is a directory.
  -e  return 0 if <path> exists.
  -f  return 0 if <path> is a file.
  -s  return 0 if file <path> is greater than zero bytes in size.
  -w  return 0 if file <path> exists and write permission is granted.
  -r  return 0 if file <path> exists and read permission is granted.
  -z  return 0 if file <path> is zero bytes in size, else return 1.
-r and -w are judged from the mode bits, the owner and the group of <path>
and the user's groups; they do not know who the service's superusers are.`},
		&command{name: "touch", usage: "[-a] [-m] [-t TIMESTAMP ] [-c] <path> ...", run: runTouch, desc: `
Updates the access and modification times of the file specified by the <path> to
the current time. If the file does not exist, then a zero length file is created
at <path> with current time as the timestamp of that <path>.
-a Change only the access time
-m Change only the modification time
-t TIMESTAMP Use specified timestamp (in format yyyyMMdd:HHmmss, or
yyyyMMddHHmmss, in local time) instead of current time
-c Do not create any files`},
		&command{name: "touchz", usage: "<path> ...", run: runTouchz, desc: `
Creates a file of zero length at <path> with current time as the timestamp of
that <path>. An error is returned if the file exists with non-zero length`},
		&command{name: "truncate", usage: "[-w] <length> <path> ...", run: runTruncate, desc: `
Truncate all files that match the specified file pattern to the
specified length.
-w  Requests that the command waits for block recovery to complete, if
    necessary. (Strata cuts a file at once: there is nothing to wait for.)`},
		&command{name: "usage", usage: "[cmd ...]", run: runUsage, desc: `
Displays the usage for given command or all commands if none is specified.`},
	)
}

func copyFromLocalCmd(name, first string) *command {
	return &command{name: name, usage: "[-f] [-p] [-l] [-d] <localsrc> ... <dst>", run: runPut, desc: first + `
Copying fails if the file already exists, unless the -f flag is given. If
<localsrc> is -, the content is read from standard input.
Flags:

-p  Preserves access and modification times, ownership and the mode.
-f  Overwrites the destination if it already exists.
-l  Accepted for compatibility (lazy persistence); it has no effect.
-d  Skip creation of temporary file(<dst>._COPYING_).
` + progressNote}
}

func copyToLocalCmd(name, first string) *command {
	return &command{name: name, usage: "[-f] [-p] [-ignoreCrc] [-crc] <src> ... <localdst>", run: runGet, desc: first + `

-f          Overwrites the destination if it already exists.
-p          Preserves access and modification times, ownership and the mode.
-ignoreCrc  Accepted for compatibility; Strata verifies every read anyway.
-crc        Accepted for compatibility; no .crc files are written.
` + progressNote}
}

// progressNote ends the help of the commands that may draw a progress bar.
const progressNote = `
A file of 64 MiB or more shows a progress bar on stderr when stderr is a
terminal (set STRATA_NO_PROGRESS to turn it off); it is erased when done.`
