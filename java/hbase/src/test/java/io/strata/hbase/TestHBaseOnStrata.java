package io.strata.hbase;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import io.strata.core.testing.DevClusterRule;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.RegionMetrics;
import org.apache.hadoop.hbase.ServerName;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.CompactionState;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.RegionInfo;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.junit.ClassRule;
import org.junit.Test;

/**
 * HBase with its root directory and its write-ahead log on strata:// (a real strata server, an
 * HBase mini cluster in this JVM): a pre-split table is written, flushed, major-compacted and
 * split; rows written after that are only in the log when a region server is killed; after the
 * master replayed its log, and after a restart of the whole cluster, every acknowledged row
 * reads back whole.
 */
public class TestHBaseOnStrata {
  @ClassRule public static final DevClusterRule SERVER = new DevClusterRule();

  private static final TableName TABLE = TableName.valueOf("usertable");
  private static final byte[] FAMILY = "f".getBytes(StandardCharsets.UTF_8);
  /** The seed's record shape (YCSB's default): 10 fields of 100 bytes. */
  private static final int FIELDS = 10;
  private static final int FIELD_SIZE = 100;
  private static final int ROWS = 2000;

  private static byte[] row(int i) {
    return String.format("row-%06d", i).getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] value(int i, int field) {
    byte[] v = new byte[FIELD_SIZE];
    Arrays.fill(v, (byte) ('a' + (i + field) % 26));
    System.arraycopy(row(i), 0, v, 0, row(i).length);
    return v;
  }

  private static byte[] qualifier(int field) {
    return ("field" + field).getBytes(StandardCharsets.UTF_8);
  }

  @Test(timeout = 600_000)
  public void everyAcknowledgedRowSurvives() throws Exception {
    Configuration conf = HBaseConfiguration.create();
    conf.set("fs.defaultFS", "strata://default/");
    conf.set("fs.strata.meta.address", SERVER.address());
    conf.set("fs.strata.token", SERVER.token());
    // Store files and logs over several blocks.
    conf.set("fs.strata.block.size", "1m");
    try (MiniHBase hbase = MiniHBase.start(conf, 2)) {
      assertEquals("strata", hbase.rootDir().toUri().getScheme());
      assertEquals("strata", hbase.walDir().toUri().getScheme());
      assertTrue(!hbase.walDir().toString().startsWith(hbase.rootDir() + "/"));
      // The logs' streams must declare hflush and hsync (no safety turned off).
      assertTrue(hbase.conf().getBoolean(MiniHBase.ENFORCE_CAPABILITIES, false));
      Admin admin = hbase.admin();
      admin.createTable(TableDescriptorBuilder.newBuilder(TABLE)
          .setColumnFamily(ColumnFamilyDescriptorBuilder.of(FAMILY)).build(),
          new byte[][] {row(ROWS / 4), row(ROWS / 2), row(3 * ROWS / 4), row(ROWS)});
      hbase.awaitOnline(TABLE);
      assertEquals(5, admin.getRegions(TABLE).size());

      write(hbase, 0, ROWS);
      admin.flush(TABLE);
      write(hbase, ROWS, 2 * ROWS); // a second store file per region
      admin.flush(TABLE);
      admin.majorCompact(TABLE);
      awaitCompacted(admin);
      split(hbase, admin);
      // Only in the logs and the memstores now.
      write(hbase, 2 * ROWS, 3 * ROWS);
      assertTrue("no log on strata", countFiles(hbase.fileSystem(), hbase.walDir()) > 0);

      ServerName victim = busiest(admin);
      hbase.killRegionServer(victim);
      hbase.awaitOnline(TABLE);
      checkRows(hbase, 3 * ROWS);

      hbase.restart(TABLE);
      checkRows(hbase, 3 * ROWS);
    }
  }

  /** Writes rows {@code [from, to)} in batches; each batch is acknowledged when put returns. */
  private static void write(MiniHBase hbase, int from, int to) throws IOException {
    try (Table t = hbase.connection().getTable(TABLE)) {
      List<Put> batch = new ArrayList<>();
      for (int i = from; i < to; i++) {
        Put p = new Put(row(i));
        for (int f = 0; f < FIELDS; f++) {
          p.addColumn(FAMILY, qualifier(f), value(i, f));
        }
        batch.add(p);
        if (batch.size() == 100 || i == to - 1) {
          t.put(batch);
          batch.clear();
        }
      }
    }
  }

  /** Scans the table: rows 0 to {@code n - 1}, each with every field, and nothing else. */
  private static void checkRows(MiniHBase hbase, int n) throws IOException {
    try (Table t = hbase.connection().getTable(TABLE);
        ResultScanner s = t.getScanner(new Scan().setCaching(500))) {
      int i = 0;
      for (Result r : s) {
        assertArrayEquals("row " + i, row(i), r.getRow());
        assertEquals("row " + i, FIELDS, r.size());
        for (int f = 0; f < FIELDS; f++) {
          assertArrayEquals("row " + i + " field " + f, value(i, f),
              r.getValue(FAMILY, qualifier(f)));
        }
        i++;
      }
      assertEquals(n, i);
    }
  }

  /**
   * Waits until every region of the table has one store file per family and none compacts (a
   * major compaction's end: HBase says so only by polling).
   */
  private static void awaitCompacted(Admin admin) throws Exception {
    while (!compacted(admin)) {
      Thread.sleep(100); // polling the compaction
    }
  }

  private static boolean compacted(Admin admin) throws IOException {
    if (admin.getCompactionState(TABLE) != CompactionState.NONE) {
      return false;
    }
    for (ServerName sn : admin.getRegionServers()) {
      for (RegionMetrics m : admin.getRegionMetrics(sn, TABLE)) {
        if (m.getStoreFileCount() > 1) {
          return false;
        }
      }
    }
    return true;
  }

  /** Splits the first region in two and waits until both daughters are online. */
  private static void split(MiniHBase hbase, Admin admin) throws Exception {
    RegionInfo first = admin.getRegions(TABLE).get(0);
    admin.splitRegionAsync(first.getRegionName(), row(ROWS / 8)).get();
    hbase.awaitOnline(TABLE);
    assertEquals(6, admin.getRegions(TABLE).size());
  }

  /** The region server holding the most regions of the table. */
  private static ServerName busiest(Admin admin) throws IOException {
    ServerName best = null;
    int most = -1;
    for (ServerName sn : admin.getRegionServers()) {
      int n = 0;
      for (RegionInfo r : admin.getRegions(sn)) {
        n += r.getTable().equals(TABLE) ? 1 : 0;
      }
      if (n > most) {
        best = sn;
        most = n;
      }
    }
    return best;
  }

  private static int countFiles(FileSystem fs, Path dir) throws IOException {
    int n = 0;
    for (FileStatus st : fs.listStatus(dir)) {
      n += st.isDirectory() ? countFiles(fs, st.getPath()) : 1;
    }
    return n;
  }
}
