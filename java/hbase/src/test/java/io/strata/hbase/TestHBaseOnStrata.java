package io.strata.hbase;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import io.strata.core.testing.DevClusterRule;
import io.strata.hbase.wal.StrataLogWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
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
 * HBase mini cluster in this JVM, the log written by {@link StrataLogWriter}): a pre-split table
 * is written, flushed, major-compacted and split; rows written after that are only in the log
 * when a region server is killed; after the master replayed its log, and after a restart of the
 * whole cluster, every acknowledged row reads back whole. And a region server killed while
 * writers put rows one by one, right after acknowledged writes: every row acknowledged before
 * the kill (or after, once its region moved) reads back whole.
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
    return value(row(i), i, field);
  }

  /** Field {@code field} of row {@code key}, number {@code i}: the key, then a letter. */
  private static byte[] value(byte[] key, int i, int field) {
    byte[] v = new byte[FIELD_SIZE];
    Arrays.fill(v, (byte) ('a' + (i + field) % 26));
    System.arraycopy(key, 0, v, 0, key.length);
    return v;
  }

  /** Row {@code i} of all fields, as put and as it must read back. */
  private static Put put(byte[] key, int i) {
    Put p = new Put(key);
    for (int f = 0; f < FIELDS; f++) {
      p.addColumn(FAMILY, qualifier(f), value(key, i, f));
    }
    return p;
  }

  private static byte[] qualifier(int field) {
    return ("field" + field).getBytes(StandardCharsets.UTF_8);
  }

  private static Configuration conf() throws IOException {
    Configuration conf = HBaseConfiguration.create();
    conf.set("fs.defaultFS", "strata://default/");
    conf.set("fs.strata.meta.address", SERVER.address());
    conf.set("fs.strata.token", SERVER.token());
    // Store files and logs over several blocks.
    conf.set("fs.strata.block.size", "1m");
    return conf;
  }

  @Test(timeout = 600_000)
  public void everyAcknowledgedRowSurvives() throws Exception {
    try (MiniHBase hbase = MiniHBase.start(conf(), 2)) {
      assertEquals("strata", hbase.rootDir().toUri().getScheme());
      assertEquals("strata", hbase.walDir().toUri().getScheme());
      assertTrue(!hbase.walDir().toString().startsWith(hbase.rootDir() + "/"));
      // The logs' streams must declare hflush and hsync (no safety turned off).
      assertTrue(hbase.conf().getBoolean(MiniHBase.ENFORCE_CAPABILITIES, false));
      assertTrue("the logs are not written by StrataLogWriter", strataLogOutputs());
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

      ServerName victim = busiest(admin, TABLE);
      hbase.killRegionServer(victim);
      hbase.awaitOnline(TABLE);
      checkRows(hbase, 3 * ROWS);

      hbase.restart(TABLE);
      checkRows(hbase, 3 * ROWS);
    }
  }

  private static final TableName KILLED = TableName.valueOf("killed");
  /** Writers of {@link #rowsAcknowledgedRightBeforeAKillSurvive}. */
  private static final int WRITERS = 4;
  /** Rows acknowledged before the kill. */
  private static final int BEFORE_KILL = 1000;

  /** The key of row {@code i} of table {@link #KILLED}: the rows go round its four regions. */
  private static byte[] killedRow(int i) {
    return String.format("r%d-%07d", i % 4, i).getBytes(StandardCharsets.UTF_8);
  }

  /**
   * A region server in a process of its own holds every region of a table; writers put rows one
   * at a time, each acknowledged when put returns (after the log's sync); once {@link
   * #BEFORE_KILL} are, the server is killed with SIGKILL while the writers go on, and they stop
   * once it is dead. After the master split its log (from Strata, the file still open) and
   * replayed it, every row acknowledged (before the kill, or after it once the row's region
   * moved) reads back whole, and no row that reads back is torn.
   */
  @Test(timeout = 600_000)
  public void rowsAcknowledgedRightBeforeAKillSurvive() throws Exception {
    try (MiniHBase hbase = MiniHBase.start(conf(), 1)) {
      Admin admin = hbase.admin();
      admin.createTable(TableDescriptorBuilder.newBuilder(KILLED)
          .setColumnFamily(ColumnFamilyDescriptorBuilder.of(FAMILY)).build(),
          new byte[][] {bytes("r1"), bytes("r2"), bytes("r3")});
      hbase.awaitOnline(KILLED);
      admin.balancerSwitch(false, true);
      try (RegionServerProcess rs = RegionServerProcess.start(hbase, 4000)) {
        moveAll(hbase, KILLED, rs.name());
        Set<Integer> acked = writeThroughAKill(hbase, rs);
        assertTrue(acked.size() >= BEFORE_KILL);
        checkAcknowledged(hbase, acked);
      }
    }
  }

  /**
   * Moves every region of {@code table} to {@code to}, and waits until they are open there. A
   * move the master made elsewhere (a server that just joined may not take regions yet) is asked
   * for again.
   */
  private static void moveAll(MiniHBase hbase, TableName table, ServerName to) throws Exception {
    Admin admin = hbase.admin();
    long deadline = System.nanoTime() + MiniHBase.ONLINE_WAIT.toNanos();
    for (;;) {
      Set<String> there = new HashSet<>();
      for (RegionInfo r : admin.getRegions(to)) {
        there.add(r.getEncodedName());
      }
      List<RegionInfo> elsewhere = new ArrayList<>();
      for (RegionInfo r : admin.getRegions(table)) {
        if (!there.contains(r.getEncodedName())) {
          elsewhere.add(r);
        }
      }
      if (elsewhere.isEmpty()) {
        break;
      }
      assertTrue("the regions did not move within " + MiniHBase.ONLINE_WAIT,
          System.nanoTime() < deadline);
      for (RegionInfo r : elsewhere) {
        admin.move(r.getEncodedNameAsBytes(), to);
      }
    }
    hbase.awaitOnline(table);
  }

  /**
   * Runs {@link #WRITERS} writers of table {@link #KILLED}, kills {@code rs} once {@link
   * #BEFORE_KILL} rows are acknowledged, stops the writers, waits until every region is online
   * again and the writers are done; returns the rows acknowledged.
   */
  private static Set<Integer> writeThroughAKill(MiniHBase hbase, RegionServerProcess rs)
      throws Exception {
    Set<Integer> acked = ConcurrentHashMap.newKeySet();
    AtomicBoolean killing = new AtomicBoolean();
    AtomicBoolean stop = new AtomicBoolean();
    CountDownLatch enough = new CountDownLatch(BEFORE_KILL);
    ExecutorService pool = Executors.newFixedThreadPool(WRITERS);
    try {
      List<Future<?>> writers = new ArrayList<>();
      for (int w = 0; w < WRITERS; w++) {
        int first = w;
        writers.add(pool.submit(() -> putRows(hbase, first, killing, stop, acked, enough)));
      }
      assertTrue("no " + BEFORE_KILL + " rows acknowledged within 5 minutes",
          enough.await(5, TimeUnit.MINUTES));
      killing.set(true);
      rs.kill();
      stop.set(true);
      hbase.awaitOnline(KILLED);
      for (Future<?> w : writers) {
        w.get(5, TimeUnit.MINUTES); // a writer's failure before the kill fails the test
      }
    } finally {
      pool.shutdownNow();
    }
    return acked;
  }

  /**
   * Puts rows {@code first}, {@code first + WRITERS}... of {@link #KILLED} until {@code stop},
   * adding each to {@code acked} once put returns. A put that fails once {@code killing} is set
   * is not acknowledged, and ends the writer; one that fails before fails it.
   */
  private static Void putRows(MiniHBase hbase, int first, AtomicBoolean killing,
      AtomicBoolean stop, Set<Integer> acked, CountDownLatch enough) throws IOException {
    try (Table t = hbase.connection().getTable(KILLED)) {
      for (int i = first; !stop.get(); i += WRITERS) {
        try {
          t.put(put(killedRow(i), i));
        } catch (IOException e) {
          if (!killing.get()) {
            throw e;
          }
          return null;
        }
        acked.add(i);
        enough.countDown();
      }
    }
    return null;
  }

  /** Every row of {@code acked} reads back whole; every row that reads back is whole. */
  private static void checkAcknowledged(MiniHBase hbase, Set<Integer> acked) throws IOException {
    Set<Integer> found = new HashSet<>();
    try (Table t = hbase.connection().getTable(KILLED);
        ResultScanner s = t.getScanner(new Scan().setCaching(500))) {
      for (Result r : s) {
        String key = new String(r.getRow(), StandardCharsets.UTF_8);
        int i = Integer.parseInt(key.substring(key.indexOf('-') + 1));
        assertArrayEquals(killedRow(i), r.getRow());
        assertEquals("row " + key, FIELDS, r.size());
        for (int f = 0; f < FIELDS; f++) {
          assertArrayEquals("row " + key + " field " + f, value(r.getRow(), i, f),
              r.getValue(FAMILY, qualifier(f)));
        }
        found.add(i);
      }
    }
    Set<Integer> lost = new TreeSet<>(acked);
    lost.removeAll(found);
    assertTrue(lost.size() + " acknowledged rows lost, e.g. " + lost.stream().limit(10).toList(),
        lost.isEmpty());
  }

  /** Whether a log is being written through a {@code StrataAsyncOutput} (its flusher runs). */
  private static boolean strataLogOutputs() {
    return Thread.getAllStackTraces().keySet().stream()
        .anyMatch(t -> t.getName().startsWith("strata-wal-flusher-"));
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** Writes rows {@code [from, to)} in batches; each batch is acknowledged when put returns. */
  private static void write(MiniHBase hbase, int from, int to) throws IOException {
    try (Table t = hbase.connection().getTable(TABLE)) {
      List<Put> batch = new ArrayList<>();
      for (int i = from; i < to; i++) {
        batch.add(put(row(i), i));
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

  /** The region server holding the most regions of {@code table}. */
  private static ServerName busiest(Admin admin, TableName table) throws IOException {
    ServerName best = null;
    int most = -1;
    for (ServerName sn : admin.getRegionServers()) {
      int n = 0;
      for (RegionInfo r : admin.getRegions(sn)) {
        n += r.getTable().equals(table) ? 1 : 0;
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
