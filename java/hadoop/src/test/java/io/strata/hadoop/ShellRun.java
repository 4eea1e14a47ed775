package io.strata.hadoop;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FsShell;
import org.apache.hadoop.util.ToolRunner;

/**
 * One run of Hadoop's FsShell (hadoop fs), in this process: its exit code and what it printed.
 *
 * @param rc the exit code (-1 for a usage error)
 * @param out what it printed on standard output
 * @param err what it printed on standard error
 */
record ShellRun(int rc, String out, String err) {
  /** Runs FsShell with {@code args} on {@code conf}, capturing System.out and System.err. */
  static ShellRun of(Configuration conf, String... args) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    PrintStream oldOut = System.out;
    PrintStream oldErr = System.err;
    int rc;
    try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
      System.setOut(o);
      System.setErr(e);
      rc = ToolRunner.run(new FsShell(conf), args);
    } finally {
      System.setOut(oldOut);
      System.setErr(oldErr);
    }
    return new ShellRun(rc, out.toString(StandardCharsets.UTF_8),
        err.toString(StandardCharsets.UTF_8));
  }
}
