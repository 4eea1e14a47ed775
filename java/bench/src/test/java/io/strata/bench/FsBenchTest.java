package io.strata.bench;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * FsBench end to end with tiny parameters against two local file systems (file:// in temporary
 * directories): every section runs, every row is there for both targets with no errors and the
 * counts the workloads promise, and Join makes one table of the results. Asserts no timing.
 */
public class FsBenchTest {
  @Rule public TemporaryFolder tmp = new TemporaryFolder();

  @Test
  public void runsEverySectionOnTwoTargets() throws Exception {
    java.io.File out = tmp.newFile("results.tsv");
    String[] args = {
      "--target", "a=" + tmp.newFolder("a").toURI(),
      "--target", "b=" + tmp.newFolder("b").toURI(),
      "--target", "c=" + tmp.newFolder("c").toURI(), "--io-only", "c",
      "--io-rounds", "2", "--io-huge-files", "1", "--io-huge-size", "200k",
      "--io-huge-targets", "a,c",
      "--threads", "1,3", "--meta-ops", "30", "--list-size", "7",
      "--tree-files", "55", "--tree-dir-files", "10", "--big-dir", "23", "--prep-threads", "4",
      "--tree-repeat", "2",
      "--io-files", "2", "--io-size", "300k", "--io-buffer", "64k",
      "--small-files", "9", "--small-size", "5000", "--small-threads", "2",
      "--out", out.getPath(),
    };
    FsBench.run(Params.parse(args));

    List<String> lines = Files.readAllLines(out.toPath(), StandardCharsets.UTF_8);
    assertEquals(Row.HEADER, lines.get(0));
    Map<String, Row> rows = new HashMap<>();
    for (String line : lines.subList(1, lines.size())) {
      if (!line.startsWith("#")) {
        Row r = Row.parse(line);
        assertEquals(line, 0, r.errors());
        rows.put(r.target() + " " + r.op() + " " + r.threads(), r);
      }
    }
    for (String t : List.of("a", "b")) {
      for (int threads : List.of(1, 3)) {
        for (String op : MetaWorkload.OPS) {
          Row r = rows.get(t + " " + op + " " + threads);
          assertNotNull(t + " " + op + " " + threads, r);
          assertEquals(t + " " + op + " " + threads, 30, r.count());
          assertTrue(r.p50() <= r.p99() && r.p99() <= r.max());
        }
      }
      // 55 files in 6 leaf directories under 1 directory.
      assertEquals(55 + 6 + 1, rows.get(t + " ls -R 1").count());
      assertEquals(0, rows.get(t + " du -s 1").count());
      assertEquals(55, rows.get(t + " count 1").count());
      assertEquals(23, rows.get(t + " list 1 dir 1").count());
      assertEquals(55, rows.get(t + " prepare: create 4").count());
      assertEquals(2, rows.get(t + " write large 2").count());
      assertEquals(2, rows.get(t + " read large 2").count());
      assertEquals(9, rows.get(t + " read small 2").count());
      assertEquals(2 * 300 * 1024 / 1e6, rows.get(t + " read large 2").mbPerSec()
          * rows.get(t + " read large 2").secs(), 0.01);
    }

    // c, a baseline of the io section only: its io rows and no others; the huge files on a
    // and c only; a large row is the median of its rounds and says so.
    assertNotNull(rows.get("c write large 2"));
    assertNotNull(rows.get("c read small 2"));
    assertNull(rows.get("c mkdirs 1"));
    assertNull(rows.get("c ls -R 1"));
    assertEquals(1, rows.get("a read huge 1").count());
    assertEquals(1, rows.get("c write huge 1").count());
    assertNull(rows.get("b write huge 1"));
    assertTrue(rows.get("a write large 2").detail(),
        rows.get("a write large 2").detail().matches(".*rounds \\d+/\\d+ MB/s.*cpu_s_per_GB=.*"));

    Join j = new Join("a", "b", null);
    j.ioBaseline = "c";
    j.read(lines);
    String table = j.table();
    assertTrue(table, table.contains("Throughput against c"));
    assertTrue(table, table.contains("write huge"));
    assertTrue(table, table.contains("tree-files=55"));
    assertTrue(table, table.contains("Metadata (NNBench-style)"));
    assertTrue(table, table.contains("create_write_512"));
    assertTrue(table, table.contains("list 1 dir"));
    assertTrue(table, table.contains("read small"));
    assertTrue(table, table.contains("errors: none"));
  }

  /** The cache section on two targets that are one directory, as Strata and S3A are one bucket. */
  @Test
  public void cacheSectionOnOneStore() throws Exception {
    java.io.File out = tmp.newFile("cache.tsv");
    String lake = tmp.newFolder("lake").toURI().toString();
    String[] args = {
      "--target", "a=" + lake, "--target", "b=" + lake, "--sections", "cache",
      "--threads", "1,3", "--meta-ops", "20", "--prep-threads", "2",
      "--cache-dirs", "3", "--cache-files", "4", "--cache-file-size", "100",
      "--out", out.getPath(),
    };
    FsBench.run(Params.parse(args));

    List<String> lines = Files.readAllLines(out.toPath(), StandardCharsets.UTF_8);
    Map<String, Row> rows = new HashMap<>();
    for (String line : lines.subList(1, lines.size())) {
      if (!line.startsWith("#")) {
        Row r = Row.parse(line);
        assertEquals(line, 0, r.errors());
        assertEquals(line, "cache", r.section());
        rows.put(r.target() + " " + r.op() + " " + r.threads(), r);
      }
    }
    assertEquals(12, rows.get("b prepare: write objects 2").count());
    assertEquals(null, rows.get("a prepare: write objects 2"));
    for (String t : List.of("a", "b")) {
      assertEquals(12 + 3, rows.get(t + " first walk 1").count());
      assertEquals(12, rows.get(t + " first read 2").count());
      for (int threads : List.of(1, 3)) {
        for (String op : CacheWorkload.OPS) {
          assertEquals(t + " " + op + " " + threads, 20,
              rows.get(t + " " + op + " " + threads).count());
        }
      }
    }
    Join j = new Join("a", "b", null);
    j.read(lines);
    String table = j.table();
    assertTrue(table, table.contains("Cache mode (one bucket's objects through both)"));
    assertTrue(table, table.contains("b prepare: write objects: 12 in"));
    assertTrue(table, table.matches("(?s).*first walk +1 .*15 entries.*"));
    assertTrue(table, table.matches("(?s).*first read +2 .*"));
    assertTrue(table, table.matches("(?s).*listStatus +3 .*"));
    assertTrue(table, !table.contains("Metadata (NNBench-style)"));
  }
}
