package fsshell

// The commands a move off HDFS needs besides the everyday ones (issue 39),
// in Hadoop 3.4's words where Strata behaves as Hadoop does and in our own
// where it does not. They register apart from commands.go's so that each
// group reads on its own.
func init() {
	register(
		&command{name: "checksum", usage: "[-v] <src> ...", run: runChecksum, desc: `
Dump checksum information for files that match the file pattern <src> to stdout.
Strata's checksum is HDFS's COMPOSITE-CRC32C (the CRC32C of the whole file,
whatever its blocks), equal to HDFS's for the same bytes when HDFS is asked for
that form (dfs.checksum.combine.mode=COMPOSITE_CRC), and combined from the CRCs
the workers keep: a cached file is not read. An empty file's is HDFS's
MD5-of-0MD5-of-0CRC32.

-v  Display block size for the file.`},
		&command{name: "concat", usage: "<target path> <src path> <src path> ...", run: runConcat, desc: `
Concatenate existing source files into the target file. Target file and source
files should be in the same directory. (Strata does not require it: any files
of one namespace.) Their blocks become the target's without a byte being
copied; the sources are removed.`},
		&command{name: "df", usage: "[-h] [<path> ...]", run: runDf, desc: `
Shows the capacity, free and used space of the filesystem. A namespace's
bucket has no capacity to show: Size is the largest Java long, and Used the
bytes the namespace holds.

-h  Formats the sizes of files in a human-readable fashion rather than a number
    of bytes.`},
		&command{name: "find", usage: "<path> ... <expression> ...", run: runFind, desc: `
Finds all files that match the specified expression and
applies selected actions to them. If no <path> is specified
then defaults to the current working directory. If no
expression is specified then defaults to -print.

The following primary expressions are recognised:
  -name pattern
  -iname pattern
    Evaluates as true if the basename of the file matches the
    pattern using standard file system globbing.
    If -iname is used then the match is case insensitive.

  -print
  -print0
    Always evaluates to true. Causes the current pathname to be
    written to standard output followed by a newline. If the -print0
    expression is used then an ASCII NULL character is appended rather
    than a newline.

The following operators are recognised:
  expression -a expression
  expression -and expression
  expression expression
    Logical AND operator for joining two expressions. Returns
    true if both child expressions return true. Implied by the
    juxtaposition of two expressions and so does not need to be
    explicitly specified. The second expression will not be
    applied if the first fails.`},
		&command{name: "getmerge", usage: "[-nl] [-skip-empty-file] <src> <localdst>", run: runGetmerge, desc: `
Get all the files in the directories that match the source file pattern and
merge and sort them to only one file on local fs. <src> is kept.

-nl               Add a newline character at the end of each file.
-skip-empty-file  Do not add new line character for empty file.`},
		&command{name: "head", usage: "<file>", run: runHead, desc: `
Show the first 1KB of the file.`},
		&command{name: "moveFromLocal", usage: "[-f] [-p] [-l] [-d] <localsrc> ... <dst>", run: runMoveFromLocal, desc: `
Same as -put, except that the source is deleted after it's copied
and -t option has not yet implemented.`},
		&command{name: "moveToLocal", usage: "<src> <localdst>", run: runMoveToLocal, desc: `
Not implemented yet (as in Hadoop: use -get, then -rm).`},
		&command{name: "setrep", usage: "[-R] [-w] <rep> <path> ...", run: runSetrep, desc: `
Set the replication level of a file. If <path> is a directory then the command
recursively changes the replication factor of all files under the directory tree
rooted at <path>.

Replication has no meaning in Strata: a namespace's blocks live once, in its
bucket, which keeps them durable. As on other such file systems (S3A), the
factor is accepted and reported set, and nothing changes.

-w  It requests that the command waits for the replication to complete. There
    is nothing to wait for: it returns at once.
-R  It is accepted for backwards compatibility. It has no effect.`},
		&command{name: "text", usage: "[-ignoreCrc] <src> ...", run: runText, desc: `
Takes a source file and outputs the file in text format.
The allowed formats are zip and TextRecordInputStream: gzip files (by their
magic), SequenceFiles (each record as key, tab, value; uncompressed or
compressed with DefaultCodec, GzipCodec or BZip2Codec; keys and values of the
common Writables), and files whose name ends .gz, .deflate or .bz2. Snappy,
LZ4 and Zstandard need Hadoop's native code: use hadoop fs -text for those.`},
	)
}
