package io.strata.bench;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.util.List;
import org.junit.Test;

/** Join on fixed results: ratios in the right direction and the targets' verdicts. */
public class JoinTest {
  private static String row(String target, String section, String op, int threads, double secs,
      double opsPerSec, double mbPerSec, double p50, double p99) {
    return new Row(target, section, op, threads, 1000, 0, secs, opsPerSec, mbPerSec, p50, p50,
        p99, p99, p99, "").tsv();
  }

  private static String table() {
    return table(null);
  }

  private static String table(Double within) {
    Join j = new Join("s", "h", within);
    j.read(List.of(Row.HEADER, "# threads\t1,64", "# loadavg.start\t1.00 2.00 3.00",
        row("s", "meta", "create_write_0", 1, 1, 500, Double.NaN, 2, 5),
        row("h", "meta", "create_write_0", 1, 1, 400, Double.NaN, 2, 5),
        // 64 threads: 12x and p99 1.5 under HDFS's p50 2.0: both met.
        row("s", "meta", "create_write_0", 64, 1, 12000, Double.NaN, 0.5, 1.5),
        row("h", "meta", "create_write_0", 64, 1, 1000, Double.NaN, 2.0, 9),
        // 2.5x (target 3x) and p99 3.0 over 2.0: both missed.
        row("s", "meta", "open_read", 64, 1, 2500, Double.NaN, 1.0, 3.0),
        row("h", "meta", "open_read", 64, 1, 1000, Double.NaN, 2.0, 9),
        row("s", "tree", "du -s", 1, 0.01, Double.NaN, Double.NaN, Double.NaN, Double.NaN),
        row("h", "tree", "du -s", 1, 2.0, Double.NaN, Double.NaN, Double.NaN, Double.NaN),
        row("s", "tree", "ls -R", 1, 10, Double.NaN, Double.NaN, Double.NaN, Double.NaN),
        row("h", "tree", "ls -R", 1, 15, Double.NaN, Double.NaN, Double.NaN, Double.NaN),
        row("s", "io", "write large", 4, 2, 2, 300, Double.NaN, Double.NaN),
        row("h", "io", "write large", 4, 2, 2, 200, Double.NaN, Double.NaN)));
    return j.table();
  }

  @Test
  public void ratiosAndVerdicts() {
    String t = table();
    assertTrue(t, t.contains("load average (1/5/15 min): start 1.00 2.00 3.00"));
    assertTrue(t, t.matches("(?s).*create_write_0 +1 +500 +400 +1\\.25x.*"));
    assertTrue(t, t.matches("(?s).*create_write_0 +64 +12000 +1000 +12\\.0x.*"));
    assertTrue(t, t.contains("≥10x met, p99<h p50 met"));
    assertTrue(t, t.contains("≥3x MISSED, p99<h p50 MISSED"));
    // Seconds: the ratio is baseline / subject.
    assertTrue(t, t.matches("(?s).*du -s +1000 bytes +0\\.010 +2\\.000 +200x +-/- +-/- +≥100x met.*"));
    assertTrue(t, t.matches("(?s).*ls -R +1000 +10\\.0 +15\\.0 +1\\.50x +-/- +-/- +≥2x MISSED.*"));
    assertTrue(t, t.matches("(?s).*write large +4 +300 +200 +1\\.50x.*"));
    assertTrue(t, t.contains("targets met (3): create_write_0 ≥10x (12.0x); "
        + "create_write_0 p99<h p50 (1.50 vs 2.00 ms); du -s ≥100x (200x)"));
    assertTrue(t, t.contains("targets missed (3): open_read ≥3x (2.50x); "
        + "open_read p99<h p50 (3.00 vs 2.00 ms); ls -R ≥2x (1.50x)"));
  }

  /** --within 10: every row's target is the subject at 0.9 of the baseline or better. */
  @Test
  public void within() {
    String t = table(10.0);
    assertTrue(t, t.matches("(?s).*create_write_0 +1 +500 +400 +1\\.25x.*within 10% met.*"));
    assertTrue(t, t.contains("targets met (6): "));
    assertTrue(t, t.contains("targets missed (0): none"));
    assertTrue(t, !t.contains("≥10x"));
    Join j = new Join("s", "h", 10.0);
    j.read(List.of(Row.HEADER, row("s", "io", "write large", 4, 2, 2, 179, Double.NaN, Double.NaN),
        row("h", "io", "write large", 4, 2, 2, 200, Double.NaN, Double.NaN)));
    t = j.table();
    assertTrue(t, t.contains("targets missed (1): write large within 10% (0.90x)"));
  }

  @Test
  public void formats() {
    assertEquals("0.50x", Join.ratio(0.5));
    assertEquals("12.5x", Join.ratio(12.5));
    assertEquals("150x", Join.ratio(150.2));
    assertEquals("-", Join.ratio(Double.NaN));
    assertEquals("256MiB", Params.size(256L << 20));
    assertEquals(5000, Params.bytes("5000"));
    assertEquals(64 << 10, Params.bytes("64KiB"));
    assertEquals(1 << 20, Params.bytes("1m"));
  }
}
