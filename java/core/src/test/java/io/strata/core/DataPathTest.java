package io.strata.core;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import io.strata.core.block.BlockIO;
import io.strata.core.block.BlockLocation;
import io.strata.core.block.BlockReader;
import io.strata.core.block.BlockWriter;
import io.strata.core.block.ReadTarget;
import io.strata.core.block.WriteTarget;
import io.strata.core.error.StrataFileNotFoundException;
import io.strata.core.testing.DevClusterRule;
import io.strata.proto.v1.WorkerStats;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.ToLongFunction;
import org.junit.After;
import org.junit.Before;
import org.junit.ClassRule;
import org.junit.Test;

/** Files over the inline limit, through the dev server's in-process worker. */
public class DataPathTest {
  @ClassRule public static final DevClusterRule SERVER = new DevClusterRule();

  private static final int MIB = 1 << 20;

  private StrataClient client;
  private StrataPath base;

  @Before
  public void setUp() throws IOException {
    client = StrataClient.connect(SERVER.clientConfig().build());
    base = StrataPath.parse("/" + getClass().getSimpleName() + "-" + System.nanoTime());
    client.mkdirs(base, 0755, true);
  }

  @After
  public void tearDown() throws IOException {
    client.delete(base, true);
    client.close();
  }

  static byte[] data(int n, long seed) {
    byte[] b = new byte[n];
    new Random(seed).nextBytes(b);
    return b;
  }

  /** Writes {@code d} in uneven pieces, with block size {@code blockSize} (0: the default). */
  static void write(StrataClient c, StrataPath p, byte[] d, long blockSize) throws IOException {
    try (FileWriter w = c.create(p, new CreateOptions(0644, true, true, 0, blockSize))) {
      int off = 0;
      int step = 1000;
      while (off < d.length) {
        int n = Math.min(step, d.length - off);
        w.write(d, off, n);
        off += n;
        step = step * 3 + 7;
      }
      assertEquals(d.length, w.length());
    }
  }

  static byte[] read(StrataClient c, StrataPath p) throws IOException {
    try (FileReader r = c.open(p)) {
      byte[] b = new byte[(int) r.length()];
      int off = 0;
      while (off < b.length) {
        off += r.read(off, b, off, b.length - off);
      }
      assertEquals(-1, r.read(b.length, new byte[1], 0, 1));
      return b;
    }
  }

  static long sum(StrataClient c, ToLongFunction<WorkerStats> f) throws IOException {
    return c.workerStats().stream().mapToLong(f).sum();
  }

  @Test
  public void sizesAroundTheInlineLimit() throws IOException {
    for (int n : new int[] {0, 1, 4095, 4096, 4097, 100_000, MIB + 1}) {
      StrataPath f = base.child("f" + n);
      byte[] d = data(n, n);
      write(client, f, d, 0);
      assertArrayEquals("size " + n, d, read(client, f));
      FileInfo st = client.getFileStatus(f);
      assertEquals(n, st.length());
      assertFalse(st.underConstruction());
      assertEquals("blocks only past the inline limit: " + n, n > 4096 ? 1 : 0,
          client.blockLocations(f).size());
    }
    assertFalse(client.renewingLeases());
  }

  @Test
  public void severalBlocks() throws IOException {
    StrataPath f = base.child("blocks");
    byte[] d = data(3 * MIB + MIB / 2 + 123, 7);
    write(client, f, d, MIB);
    assertEquals(MIB, client.getFileStatus(f).blockSize());
    assertArrayEquals(d, read(client, f));
    List<BlockLocation> locs = client.blockLocations(f);
    assertEquals(4, locs.size());
    long off = 0;
    for (BlockLocation l : locs) {
      assertEquals(off, l.offset());
      assertFalse(l.host().isEmpty());
      assertTrue(l.address(), l.address().contains(":"));
      off += l.length();
    }
    assertEquals(d.length, off);
    assertEquals(MIB / 2 + 123, locs.get(3).length());
  }

  @Test
  public void randomPositionedReads() throws Exception {
    StrataPath f = base.child("random");
    byte[] d = data(3 * MIB + 4321, 11);
    write(client, f, d, MIB);
    Random rnd = new Random(5);
    try (FileReader r = client.open(f)) {
      for (int i = 0; i < 150; i++) {
        long pos = rnd.nextInt(d.length + 10);
        int len = rnd.nextInt(4) == 0 ? rnd.nextInt(3 * MIB) : rnd.nextInt(10_000);
        checkRead(r, d, pos, len);
      }
      // Across each block boundary, and at the end.
      for (long pos : new long[] {MIB - 1, 2L * MIB - 3, 3L * MIB - 1, d.length - 1}) {
        checkRead(r, d, pos, 10);
      }
      assertEquals(-1, r.read(d.length, new byte[5], 0, 5));
      assertEquals(0, r.read(5, new byte[5], 0, 0));
      // Concurrent positioned reads share the reader.
      ExecutorService pool = Executors.newFixedThreadPool(8);
      try {
        List<Future<?>> fs = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
          long seed = t;
          fs.add(pool.submit(() -> {
            Random tr = new Random(seed);
            for (int i = 0; i < 20; i++) {
              checkRead(r, d, tr.nextInt(d.length), tr.nextInt(2 * MIB));
            }
            return null;
          }));
        }
        for (Future<?> fu : fs) {
          fu.get();
        }
      } finally {
        pool.shutdownNow();
      }
    }
  }

  private static void checkRead(FileReader r, byte[] d, long pos, int len) throws IOException {
    byte[] got = new byte[len + 2];
    int n = r.read(pos, got, 1, len);
    if (len == 0) {
      assertEquals(0, n);
      return;
    }
    if (pos >= d.length) {
      assertEquals(-1, n);
      return;
    }
    int want = (int) Math.min(len, d.length - pos);
    assertEquals("read " + pos + "+" + len, want, n);
    assertArrayEquals("read " + pos + "+" + len,
        Arrays.copyOfRange(d, (int) pos, (int) pos + want), Arrays.copyOfRange(got, 1, 1 + n));
  }

  @Test
  public void cachedBlocksAreReadShortCircuit() throws IOException {
    StrataPath f = base.child("sc");
    byte[] d = data(2 * MIB + 77, 3);
    write(client, f, d, MIB);
    long sc0 = sum(client, WorkerStats::getShortCircuitBytes);
    long rpc0 = sum(client, WorkerStats::getRpcBytesRead);
    long bucket0 = sum(client, WorkerStats::getBucketBytesRead);
    assertArrayEquals(d, read(client, f));
    assertTrue("short-circuit bytes", sum(client, WorkerStats::getShortCircuitBytes) - sc0
        >= d.length);
    assertEquals("nothing through the RPC", rpc0, sum(client, WorkerStats::getRpcBytesRead));
    assertEquals("the writer's worker cached the blocks", bucket0,
        sum(client, WorkerStats::getBucketBytesRead));
  }

  @Test
  public void withoutShortCircuitTheRpcServes() throws IOException {
    StrataPath f = base.child("rpc");
    byte[] d = data(2 * MIB + 99, 4);
    write(client, f, d, MIB);
    try (StrataClient rpc = StrataClient.connect(SERVER.clientConfig()
        .shortCircuit(false).build())) {
      long sc0 = sum(rpc, WorkerStats::getShortCircuitBytes);
      long rpc0 = sum(rpc, WorkerStats::getRpcBytesRead);
      assertArrayEquals(d, read(rpc, f));
      assertEquals(sc0, sum(rpc, WorkerStats::getShortCircuitBytes));
      assertTrue(sum(rpc, WorkerStats::getRpcBytesRead) - rpc0 >= d.length);
    }
  }

  /** A data path that fails as told, for the writer's failure handling. */
  private static final class FailingBlockIO implements BlockIO {
    private final boolean atOpen;

    FailingBlockIO(boolean atOpen) {
      this.atOpen = atOpen;
    }

    @Override
    public BlockWriter openWriter(WriteTarget t) throws IOException {
      if (atOpen) {
        throw new IOException("injected: no worker takes " + t.path());
      }
      return new BlockWriter() {
        @Override
        public void write(byte[] b, int off, int len) {}

        @Override
        public List<io.strata.core.block.BlockExtent> finish() throws IOException {
          throw new IOException("injected: the bucket refused the blocks");
        }

        @Override
        public void abort() {}
      };
    }

    @Override
    public BlockReader openReader(ReadTarget t) throws IOException {
      throw new IOException("injected");
    }
  }

  private StrataClient failing(boolean atOpen) {
    return StrataClient.connect(SERVER.clientConfig()
        .leaseRenewInterval(Duration.ofMillis(50)).blockIO(new FailingBlockIO(atOpen)).build());
  }

  @Test
  public void aFailedWriteRemovesTheFile() throws IOException {
    try (StrataClient c = failing(true)) {
      StrataPath f = base.child("failed");
      FileWriter w = c.create(f, CreateOptions.defaults());
      w.write(new byte[4096]);
      IOException e = assertThrows(IOException.class, () -> w.write(new byte[10]));
      assertTrue(e.getMessage(), e.getMessage().contains("injected"));
      assertThrows(StrataFileNotFoundException.class, () -> client.getFileStatus(f));
      assertThrows("the stream is broken", IOException.class, () -> w.write(1));
      IOException closed = assertThrows(IOException.class, w::close);
      assertTrue(closed.getMessage(), closed.getMessage().contains("removed"));
      assertFalse("the lease renewer stops with the last writer", c.renewingLeases());
    }
  }

  @Test
  public void aWriteFailingAtCloseRemovesTheFile() throws IOException {
    try (StrataClient c = failing(false)) {
      StrataPath f = base.child("failedAtClose");
      FileWriter w = c.create(f, CreateOptions.defaults());
      w.write(new byte[2 * MIB]);
      IOException e = assertThrows(IOException.class, w::close);
      assertTrue(e.getMessage(), e.getMessage().contains("refused the blocks"));
      assertThrows(StrataFileNotFoundException.class, () -> client.getFileStatus(f));
      assertFalse(c.renewingLeases());
    }
  }

  @Test
  public void aFailedWriteLeavesANewerFileAlone() throws IOException {
    try (StrataClient c = failing(true)) {
      StrataPath f = base.child("replaced");
      FileWriter w = c.create(f, CreateOptions.defaults());
      w.write(new byte[100]);
      assertTrue(client.recoverLease(f));
      byte[] newer = data(5000, 1);
      write(client, f, newer, 0);
      assertThrows(IOException.class, () -> w.write(new byte[5000]));
      assertArrayEquals("the delete named the failed writer's inode", newer, read(client, f));
      assertThrows(IOException.class, w::close);
    }
  }
}
