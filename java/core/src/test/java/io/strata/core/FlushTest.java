package io.strata.core;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import io.strata.core.error.AlreadyBeingCreatedException;
import io.strata.core.error.Reason;
import io.strata.core.error.StrataError;
import io.strata.core.testing.DevClusterRule;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.After;
import org.junit.Before;
import org.junit.ClassRule;
import org.junit.Test;

/**
 * hflush and hsync, append and truncate against a real dev server (the Go client's
 * flush_test.go): flushed bytes are seen by another client before close, appends by another
 * client with a reader, truncate.
 */
public class FlushTest {
  @ClassRule public static final DevClusterRule SERVER = new DevClusterRule();

  private static final int MIB = 1 << 20;

  private StrataClient writer;
  private StrataClient reader;
  private StrataPath base;

  @Before
  public void setUp() throws IOException {
    writer = StrataClient.connect(SERVER.clientConfig().build());
    reader = StrataClient.connect(SERVER.clientConfig().build());
    base = StrataPath.parse("/" + getClass().getSimpleName() + "-" + System.nanoTime());
    writer.mkdirs(base, 0755, true);
  }

  @After
  public void tearDown() throws IOException {
    writer.delete(base, true);
    writer.close();
    reader.close();
  }

  private StrataPath path(String name) {
    return new StrataPath(base.namespace(), base.path() + "/" + name);
  }

  private static FileWriter create(StrataClient c, StrataPath p, long blockSize)
      throws IOException {
    return c.create(p, new CreateOptions(0644, true, true, 0, blockSize));
  }

  /**
   * A writer's flushed bytes are visible to a reader that opens the file afterwards, before the
   * writer closes it, from inline sizes to several blocks; the file's status says their length.
   */
  @Test
  public void flushedBytesAreVisibleBeforeClose() throws IOException {
    StrataPath p = path("wal");
    ByteArrayOutputStream want = new ByteArrayOutputStream();
    try (FileWriter w = create(writer, p, MIB)) {
      int[] sizes = {10, 3000, 5000, 2 * MIB, 100, MIB + 7};
      for (int i = 0; i < sizes.length; i++) {
        byte[] b = DataPathTest.data(sizes[i], i);
        w.write(b, 0, b.length);
        want.write(b, 0, b.length);
        if (i % 2 == 0) {
          w.hflush();
        } else {
          w.hsync();
        }
        FileInfo st = reader.getFileStatus(p);
        assertEquals("after flush " + i, want.size(), st.length());
        assertTrue("after flush " + i, st.underConstruction());
        assertArrayEquals("after flush " + i, want.toByteArray(), DataPathTest.read(reader, p));
      }
      w.hflush(); // nothing new: no call
    }
    assertFalse(reader.getFileStatus(p).underConstruction());
    assertArrayEquals(want.toByteArray(), DataPathTest.read(reader, p));
  }

  /**
   * A reader sees the length at its open: bytes flushed later are the next open's. The bytes it
   * took for the tail are read from a block once a later flush, or the close, committed one over
   * them.
   */
  @Test
  public void aReaderSeesTheLengthAtItsOpen() throws IOException {
    StrataPath p = path("f");
    byte[] d = DataPathTest.data(3 * MIB, 7);
    int visible = 300_100;
    FileWriter w = create(writer, p, MIB);
    w.write(d, 0, 5000);
    w.hflush(); // a block holds [0, 5000) (content past the inline limit)
    w.write(d, 5000, visible - 5000);
    w.hflush(); // the tail holds the rest
    try (FileReader r = reader.open(p); FileReader again = reader.open(p)) {
      assertEquals(visible, r.length());
      byte[] want = Arrays.copyOf(d, visible);
      assertArrayEquals("from the tail", want, readAll(again));
      w.write(d, visible, d.length - visible);
      w.hsync(); // blocks hold [0, 2 MiB + 5000) now
      assertArrayEquals("from blocks taken over", want, readAll(r));
      assertEquals(-1, r.read(visible, new byte[10], 0, 10));
      w.close();
      assertArrayEquals("after close", want, readAll(again));
    }
    assertArrayEquals(d, DataPathTest.read(reader, p));
  }

  private static byte[] readAll(FileReader r) throws IOException {
    byte[] got = new byte[(int) r.length()];
    int n = 0;
    while (n < got.length) {
      n += r.read(n, got, n, got.length - n);
    }
    return got;
  }

  /**
   * More than a flush's largest tail written since the last flush ends a block instead: the
   * bytes are visible, in blocks.
   */
  @Test
  public void aLargeFlushEndsABlock() throws IOException {
    StrataPath p = path("big");
    byte[] d = DataPathTest.data(BlockStreams.MAX_FLUSH_TAIL + 3 * MIB, 3);
    try (FileWriter w = create(writer, p, 64L * MIB)) {
      w.write(d, 0, 100);
      w.hflush();
      w.write(d, 100, d.length - 100);
      w.hflush();
      assertEquals(d.length, reader.getFileStatus(p).length());
      assertEquals(List.of(), tailOf(p));
      assertArrayEquals(d, DataPathTest.read(reader, p));
    }
    assertArrayEquals(d, DataPathTest.read(reader, p));
  }

  /** Where the blocks of {@code p} end, if before its length (a tail), else nothing. */
  private List<Long> tailOf(StrataPath p) throws IOException {
    long end = 0;
    for (io.strata.core.block.BlockLocation b : reader.blockLocations(p)) {
      end = b.offset() + b.length();
    }
    long len = reader.getFileStatus(p).length();
    return end < len ? List.of(end) : List.of();
  }

  /**
   * Threads writing and syncing one writer at once, as HBase's log does: every record written
   * before a sync returned is visible then, and the closed file holds every record.
   */
  @Test
  public void concurrentWritesAndSyncs() throws Exception {
    StrataPath p = path("log");
    int threads = 4;
    int records = 200;
    int size = 1000;
    FileWriter w = create(writer, p, MIB);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<Long>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        byte[] rec = new byte[size];
        Arrays.fill(rec, (byte) ('a' + t));
        done.add(pool.submit(() -> {
          long synced = 0;
          for (int i = 0; i < records; i++) {
            long end;
            synchronized (w) {
              w.write(rec, 0, rec.length);
              end = w.length();
            }
            w.hsync();
            synced = Math.max(synced, end);
          }
          return synced;
        }));
      }
      for (Future<Long> f : done) {
        long synced = f.get();
        assertTrue(reader.getFileStatus(p).length() >= synced);
      }
    } finally {
      pool.shutdownNow();
    }
    w.close();
    byte[] all = DataPathTest.read(reader, p);
    assertEquals(threads * records * size, all.length);
    int[] count = new int[threads];
    for (int i = 0; i < all.length; i += size) {
      byte c = all[i];
      for (int j = i; j < i + size; j++) {
        assertEquals("record at " + i, c, all[j]);
      }
      count[c - 'a']++;
    }
    for (int t = 0; t < threads; t++) {
      assertEquals(records, count[t]);
    }
  }

  /**
   * A file written by one client is appended to by another, in a later session, while a third
   * reads it: each reader sees the old bytes and the new flushed ones; the closed file holds
   * both. A second appender is refused while the first holds the lease.
   */
  @Test
  public void appendByAnotherClientWithAReader() throws IOException {
    StrataPath p = path("log");
    byte[] old = DataPathTest.data(1_500_000, 1);
    try (StrataClient first = StrataClient.connect(SERVER.clientConfig()
        .build())) {
      DataPathTest.write(first, p, old, MIB);
    }
    ByteArrayOutputStream want = new ByteArrayOutputStream();
    want.write(old, 0, old.length);
    try (FileWriter w = writer.append(p)) {
      assertEquals(old.length, w.length());
      for (int n : new int[] {100, 900_000}) {
        byte[] b = DataPathTest.data(n, n);
        w.write(b, 0, b.length);
        want.write(b, 0, b.length);
        w.hflush();
        assertArrayEquals(want.toByteArray(), DataPathTest.read(reader, p));
      }
      assertThrows(AlreadyBeingCreatedException.class, () -> reader.append(p));
    }
    assertArrayEquals(want.toByteArray(), DataPathTest.read(reader, p));
  }

  /** Appends to small files: the inline content is written again, inline or as a block. */
  @Test
  public void appendToSmallFiles() throws IOException {
    StrataPath p = path("tiny");
    DataPathTest.write(reader, p, "abc".getBytes(), 0);
    ByteArrayOutputStream want = new ByteArrayOutputStream();
    want.write("abc".getBytes(), 0, 3);
    for (byte[] more : new byte[][] {"def".getBytes(), DataPathTest.data(5000, 5),
        "ghi".getBytes()}) {
      try (FileWriter w = reader.append(p)) {
        w.write(more, 0, more.length);
      }
      want.write(more, 0, more.length);
      assertArrayEquals(want.toByteArray(), DataPathTest.read(writer, p));
    }
    StrataPath empty = path("empty");
    DataPathTest.write(reader, empty, new byte[0], 0);
    try (FileWriter w = reader.append(empty)) {
      w.write('x');
      w.hflush();
      assertArrayEquals("x".getBytes(), DataPathTest.read(writer, empty));
    }
    assertArrayEquals("x".getBytes(), DataPathTest.read(writer, empty));
  }

  /** Truncate cuts a closed file inside a block, at a block's end and to nothing. */
  @Test
  public void truncate() throws IOException {
    StrataPath p = path("t");
    byte[] d = DataPathTest.data(3 * MIB + 5, 9);
    DataPathTest.write(writer, p, d, MIB);
    for (int len : new int[] {2 * MIB + 1000, 2 * MIB, 10, 0}) {
      reader.truncate(p, len);
      assertEquals(len, reader.getFileStatus(p).length());
      assertArrayEquals(Arrays.copyOf(d, len), DataPathTest.read(reader, p));
    }
    StrataError past = (StrataError) assertThrows(IOException.class, () -> reader.truncate(p, 1));
    assertEquals(Reason.INVALID_ARGUMENT, past.reason());
    try (FileWriter w = writer.append(p)) {
      w.write(d, 0, 2 * MIB);
      StrataError open = (StrataError) assertThrows(IOException.class,
          () -> reader.truncate(p, 0));
      assertEquals(Reason.LEASE_CONFLICT, open.reason());
    }
    assertArrayEquals(Arrays.copyOf(d, 2 * MIB), DataPathTest.read(reader, p));
  }
}
