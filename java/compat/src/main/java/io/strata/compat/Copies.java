package io.strata.compat;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.Counters;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.tools.DistCp;
import org.apache.hadoop.tools.OptionsParser;
import org.apache.hadoop.tools.mapred.CopyMapper;

/** DistCp as {@code hadoop distcp ARGS} runs it, on the local job runner, and what it did. */
public final class Copies {
  private Copies() {}

  /**
   * What one DistCp job did, from its counters.
   *
   * @param copied files copied
   * @param skipped files skipped (-update found them equal)
   * @param bytes bytes copied
   * @param millis the job's time, from submission to completion
   */
  public record Result(long copied, long skipped, long bytes, long millis) {}

  /** Runs {@code hadoop distcp args} with {@code conf}, waiting for it; fails if the job does. */
  public static Result distcp(Configuration conf, String... args) throws Exception {
    long start = System.nanoTime();
    Job job = new DistCp(conf, OptionsParser.parse(args)).execute();
    if (!job.isSuccessful()) {
      throw new IllegalStateException("distcp " + String.join(" ", args) + " failed: "
          + job.getStatus().getFailureInfo());
    }
    Counters c = job.getCounters();
    return new Result(c.findCounter(CopyMapper.Counter.COPY).getValue(),
        c.findCounter(CopyMapper.Counter.SKIP).getValue(),
        c.findCounter(CopyMapper.Counter.BYTESCOPIED).getValue(),
        (System.nanoTime() - start) / 1_000_000);
  }
}
