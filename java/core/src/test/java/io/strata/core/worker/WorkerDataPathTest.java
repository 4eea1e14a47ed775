package io.strata.core.worker;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import io.grpc.ManagedChannel;
import io.strata.core.ClientConfig;
import io.strata.core.CreateOptions;
import io.strata.core.FileReader;
import io.strata.core.FileWriter;
import io.strata.core.StrataClient;
import io.strata.core.StrataPath;
import io.strata.core.block.BlockExtent;
import io.strata.core.block.BlockIO;
import io.strata.core.block.BlockReader;
import io.strata.core.block.BlockWriter;
import io.strata.core.block.ReadTarget;
import io.strata.core.block.WriteTarget;
import io.strata.core.error.DataPathUnavailableException;
import io.strata.core.error.ServiceUnavailableException;
import io.strata.core.error.StrataFileNotFoundException;
import io.strata.core.rpc.Channels;
import io.strata.core.rpc.HostPort;
import io.strata.core.rpc.Tls;
import io.strata.core.testing.DevClusterRule;
import io.strata.proto.v1.Block;
import io.strata.proto.v1.BlockRef;
import io.strata.proto.v1.Header;
import io.strata.proto.v1.ListWorkersRequest;
import io.strata.proto.v1.MetaServiceGrpc;
import io.strata.proto.v1.OpenRequest;
import io.strata.proto.v1.OpenResponse;
import io.strata.proto.v1.ShortCircuitRequest;
import io.strata.proto.v1.ShortCircuitResponse;
import io.strata.proto.v1.WorkerInfo;
import io.strata.proto.v1.WorkerStats;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.function.ToLongFunction;
import org.junit.After;
import org.junit.AfterClass;
import org.junit.Before;
import org.junit.BeforeClass;
import org.junit.ClassRule;
import org.junit.Test;

/**
 * The worker data path against a real dev server, with the failures a unit cannot see: a corrupt
 * page in the worker's cache, workers that cannot be reached, none alive, one refusing a write;
 * and short-circuit writes into the worker's cache, its socket unreachable or refusing them, a
 * writer failing mid-block.
 */
public class WorkerDataPathTest {
  @ClassRule public static final DevClusterRule SERVER = new DevClusterRule();

  private static final int MIB = 1 << 20;
  private static final Duration TIMEOUT = Duration.ofSeconds(20);

  private static ManagedChannel metaChannel;
  private static MetaServiceGrpc.MetaServiceBlockingStub meta;

  private StrataClient client;
  private StrataPath base;

  @BeforeClass
  public static void dialMeta() throws IOException {
    metaChannel = Channels.open(HostPort.parse(SERVER.address()), Tls.plaintext(), SERVER.token());
    meta = MetaServiceGrpc.newBlockingStub(metaChannel);
  }

  @AfterClass
  public static void hangUp() {
    metaChannel.shutdownNow();
  }

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

  private static List<WorkerInfo> realWorkers() {
    return meta.listWorkers(ListWorkersRequest.getDefaultInstance()).getWorkersList();
  }

  private static OpenResponse open(StrataPath p) {
    return meta.open(OpenRequest.newBuilder().setHeader(Header.newBuilder()
        .setUser(System.getProperty("user.name"))).setPath(p.path()).build());
  }

  private static WorkerInfo dead(String id, String host, String socket) {
    return WorkerInfo.newBuilder().setId(id).setAddress("127.0.0.1:1").setHost(host)
        .setUnixSocket(socket).build();
  }

  private static byte[] data(int n, long seed) {
    byte[] b = new byte[n];
    new Random(seed).nextBytes(b);
    return b;
  }

  private static void write(StrataClient c, StrataPath p, byte[] d) throws IOException {
    try (FileWriter w = c.create(p, new CreateOptions(0644, true, true, 0, MIB))) {
      w.write(d);
    }
  }

  private static byte[] read(StrataClient c, StrataPath p) throws IOException {
    try (FileReader r = c.open(p)) {
      byte[] b = new byte[(int) r.length()];
      for (int off = 0; off < b.length; ) {
        off += r.read(off, b, off, b.length - off);
      }
      return b;
    }
  }

  private long sum(ToLongFunction<WorkerStats> f) throws IOException {
    return client.workerStats().stream().mapToLong(f).sum();
  }

  /** A client over the data path {@code io} (which the client leaves open). */
  private static StrataClient clientOver(WorkerBlockIO io) {
    return StrataClient.connect(SERVER.clientConfig().blockIO(io).build());
  }

  @Test
  public void aCorruptCachedPageIsDroppedAndReadAgain() throws IOException {
    StrataPath f = base.child("corrupt");
    byte[] d = data(2 * MIB + 5, 1);
    write(client, f, d);
    OpenResponse r = open(f);
    Block b0 = r.getBlocks(0);
    BlockRef ref = BlockRef.newBuilder().setStoreUri(r.getStoreUri())
        .setInodeId(r.getStatus().getInodeId()).setBlockId(b0.getBlockId())
        .setLength(b0.getLength()).setBlockToken(r.getBlockToken()).build();
    WorkerInfo w = realWorkers().get(0);
    ShortCircuitResponse resp;
    try (ShortCircuit sc = new ShortCircuit(Path.of(w.getUnixSocket()), TIMEOUT)) {
      resp = sc.request(ShortCircuitRequest.newBuilder().setBlock(ref).setOffset(0)
          .setLength(b0.getLength()).build());
    }
    assertTrue(resp.getError(), resp.getOk());
    assertFalse(resp.getPath().isEmpty());
    try (FileChannel fc = FileChannel.open(Path.of(resp.getPath()), StandardOpenOption.READ,
        StandardOpenOption.WRITE)) {
      ByteBuffer one = ByteBuffer.allocate(1);
      long at = resp.getFirstPage() + 100;
      fc.read(one, at);
      one.put(0, (byte) (one.get(0) ^ 0x5a)).rewind();
      fc.write(one, at);
    }
    long corrupt0 = sum(WorkerStats::getCorruptions);
    long opens0 = sum(WorkerStats::getShortCircuitOpens);
    long rpc0 = sum(WorkerStats::getRpcBytesRead);
    assertArrayEquals(d, read(client, f));
    assertTrue("the worker dropped the page", sum(WorkerStats::getCorruptions) > corrupt0);
    assertTrue("read again short-circuit", sum(WorkerStats::getShortCircuitOpens) >= opens0 + 2);
    assertEquals("not through the RPC", rpc0, sum(WorkerStats::getRpcBytesRead));
  }

  /**
   * A page corrupted in the cache file while the client holds the block's lease (the file open,
   * with its CRCs, from the read before) is found by the next read of it, dropped by the worker
   * and fetched again: the read returns the bytes written, short-circuit still.
   */
  @Test
  public void aPageCorruptedUnderALeaseIsDroppedAndReadAgain() throws IOException {
    StrataPath f = base.child("corrupt-leased");
    byte[] d = data(2 * MIB + 5, 3);
    write(client, f, d);
    long ttl = Leases.ttlNanos;
    Leases.ttlNanos = 600_000_000_000L; // outlives the slowest run: the second read is by lease
    try {
      readCorruptedUnderALease(f, d);
    } finally {
      Leases.ttlNanos = ttl;
    }
  }

  private void readCorruptedUnderALease(StrataPath f, byte[] d) throws IOException {
    assertArrayEquals(d, read(client, f)); // the client now holds the blocks' leases
    OpenResponse r = open(f);
    Block b0 = r.getBlocks(0);
    BlockRef ref = BlockRef.newBuilder().setStoreUri(r.getStoreUri())
        .setInodeId(r.getStatus().getInodeId()).setBlockId(b0.getBlockId())
        .setLength(b0.getLength()).setBlockToken(r.getBlockToken()).build();
    ShortCircuitResponse resp;
    try (ShortCircuit sc = new ShortCircuit(Path.of(realWorkers().get(0).getUnixSocket()),
        TIMEOUT)) {
      resp = sc.request(ShortCircuitRequest.newBuilder().setBlock(ref).setOffset(0)
          .setLength(b0.getLength()).build());
    }
    assertTrue(resp.getError(), resp.getOk());
    try (FileChannel fc = FileChannel.open(Path.of(resp.getPath()), StandardOpenOption.READ,
        StandardOpenOption.WRITE)) {
      ByteBuffer one = ByteBuffer.allocate(1);
      long at = resp.getFirstPage() + 70_000; // the second chunk of the first page
      fc.read(one, at);
      one.put(0, (byte) (one.get(0) ^ 0x5a)).rewind();
      fc.write(one, at);
    }
    long corrupt0 = sum(WorkerStats::getCorruptions);
    long rpc0 = sum(WorkerStats::getRpcBytesRead);
    assertArrayEquals(d, read(client, f));
    assertTrue("the worker dropped the page", sum(WorkerStats::getCorruptions) > corrupt0);
    assertEquals("not through the RPC", rpc0, sum(WorkerStats::getRpcBytesRead));
  }

  @Test
  public void readsPassOverAWorkerThatCannotBeReached() throws IOException {
    StrataPath f = base.child("fallback");
    byte[] d = data(MIB + 1000, 2);
    write(client, f, d);
    OpenResponse r = open(f);
    long inode = r.getStatus().getInodeId();
    List<WorkerInfo> real = realWorkers();
    // A dead worker that every block of the file calls home.
    String id = null;
    for (int i = 0; id == null; i++) {
      String cand = "w-dead-" + i;
      boolean first = true;
      for (Block b : r.getBlocksList()) {
        for (WorkerInfo w : real) {
          first &= Long.compareUnsigned(Rendezvous.score(cand, inode, b.getBlockId()),
              Rendezvous.score(w.getId(), inode, b.getBlockId())) > 0;
        }
      }
      id = first ? cand : null;
    }
    WorkerInfo ghost = dead(id, "elsewhere", "");
    assertEquals(id, WorkerSet.rank(with(ghost, real), inode, r.getBlocks(0).getBlockId())
        .get(0).getId());
    try (WorkerBlockIO io = new WorkerBlockIO(() -> with(ghost, realWorkers()), true, TIMEOUT);
        StrataClient c = clientOver(io)) {
      assertArrayEquals(d, read(c, f));
    }
  }

  @Test
  public void writesPassOverAWorkerThatCannotBeReached() throws IOException {
    Path socket = Files.createTempFile("strata-not-a-socket", "");
    try (WorkerBlockIO io = new WorkerBlockIO(
            () -> with(dead("w-dead", "test-host", socket.toString()), realWorkers()), true,
            TIMEOUT);
        StrataClient c = clientOver(io)) {
      StrataPath f = base.child("writeFallback");
      byte[] d = data(2 * MIB + 3, 3);
      write(c, f, d);
      assertArrayEquals(d, read(client, f));
      assertArrayEquals("the dead local worker's socket is no socket: read by RPC", d,
          read(c, f));
    } finally {
      Files.delete(socket);
    }
  }

  @Test
  public void whenNoWorkerTakesTheWriteTheFileIsRemoved() throws IOException {
    try (WorkerBlockIO io = new WorkerBlockIO(() -> List.of(dead("w-dead", "h", "")), true,
            TIMEOUT);
        StrataClient c = clientOver(io)) {
      StrataPath f = base.child("nobody");
      FileWriter w = c.create(f, CreateOptions.defaults());
      ServiceUnavailableException e = assertThrows(ServiceUnavailableException.class,
          () -> w.write(new byte[5000]));
      assertTrue(e.getMessage(), e.getMessage().contains("w-dead"));
      assertThrows(StrataFileNotFoundException.class, () -> client.getFileStatus(f));
      assertThrows(IOException.class, w::close);
    }
  }

  @Test
  public void noLiveWorkers() throws IOException {
    StrataPath big = base.child("big");
    write(client, big, data(5000, 4));
    write(client, base.child("small"), data(10, 4));
    try (WorkerBlockIO io = new WorkerBlockIO(List::of, true, TIMEOUT);
        StrataClient c = clientOver(io)) {
      FileWriter w = c.create(base.child("none"), CreateOptions.defaults());
      DataPathUnavailableException e = assertThrows(DataPathUnavailableException.class,
          () -> w.write(new byte[5000]));
      assertTrue(e.getMessage(), e.getMessage().contains("no live workers"));
      assertThrows(IOException.class, w::close);
      try (FileReader r = c.open(big)) {
        assertThrows(DataPathUnavailableException.class, () -> r.read(0, new byte[10], 0, 10));
      }
      assertEquals("small files need no worker", 10, read(c, base.child("small")).length);
    }
  }

  @Test
  public void aWorkerRefusingTheWriteFailsIt() throws IOException {
    try (WorkerSet ws = new WorkerSet(WorkerDataPathTest::realWorkers, null, false, TIMEOUT)) {
      WriteTarget t = new WriteTarget(base.child("refused"), "nosuch://bucket", 4242, MIB, 4096,
          "");
      // The refusal may come back as soon as the stream opens, or with the
      // first block: either way the write fails, refused (it carries no block token).
      java.util.concurrent.atomic.AtomicReference<BlockWriter> opened =
          new java.util.concurrent.atomic.AtomicReference<>();
      IOException e = assertThrows(IOException.class, () -> {
        opened.set(WorkerBlockWriter.open(ws, t));
        opened.get().write(new byte[3 * MIB], 0, 3 * MIB);
        opened.get().finish();
      });
      assertTrue(e.getMessage(), e.getMessage().contains("refused"));
      if (opened.get() != null) {
        opened.get().abort();
      }
    }
  }

  // Short-circuit writes: which path each block took shows in the worker's counters
  // (short_circuit_blocks_written and _bytes_written); blocks through the RPC leave them be.

  /** The worker counters that tell the paths apart, now. */
  private long[] counters() throws IOException {
    return new long[] {sum(WorkerStats::getShortCircuitBlocksWritten),
        sum(WorkerStats::getShortCircuitBytesWritten), sum(WorkerStats::getBlocksWritten)};
  }

  /** Asserts the blocks and bytes written short-circuit, and all blocks, since {@code before}. */
  private void assertWritten(long[] before, long scBlocks, long scBytes, long blocks)
      throws IOException {
    long[] now = counters();
    assertEquals("blocks written short-circuit", scBlocks, now[0] - before[0]);
    assertEquals("bytes written short-circuit", scBytes, now[1] - before[1]);
    assertEquals("blocks written", blocks, now[2] - before[2]);
  }

  /** The live workers, each with its socket at {@code socket}. */
  /** The live workers, the first of them {@code fake} (its socket, its key; the others none). */
  private static List<WorkerInfo> withFake(FakeScWorker fake) {
    List<WorkerInfo> out = new ArrayList<>();
    for (WorkerInfo w : realWorkers()) {
      out.add(out.isEmpty() ? fake.as(w) : w.toBuilder().clearUnixSocket().build());
    }
    return out;
  }

  private static List<WorkerInfo> withSocket(String socket) {
    List<WorkerInfo> out = new ArrayList<>();
    for (WorkerInfo w : realWorkers()) {
      out.add(w.toBuilder().setUnixSocket(socket).build());
    }
    return out;
  }

  @Test
  public void aFileIsWrittenIntoTheLocalWorkersCache() throws IOException {
    StrataPath f = base.child("sc");
    byte[] d = data(5 * MIB + MIB / 2, 1);
    long[] before = counters();
    write(client, f, d);
    assertWritten(before, 6, d.length, 6);
    assertArrayEquals(d, read(client, f));
  }

  @Test
  public void withShortCircuitWritesOffTheBlocksGoThroughTheRpc() throws IOException {
    byte[] d = data(2 * MIB + 5, 2);
    try (StrataClient rpc = StrataClient.connect(SERVER.clientConfig()
        .shortCircuitWrites(false).build())) {
      long[] before = counters();
      write(rpc, base.child("writesOff"), d);
      assertWritten(before, 0, 0, 3);
      assertArrayEquals("short-circuit reads stay on", d, read(rpc, base.child("writesOff")));
    }
    try (StrataClient rpc = StrataClient.connect(SERVER.clientConfig()
        .shortCircuit(false).build())) {
      long[] before = counters();
      write(rpc, base.child("allOff"), d);
      assertWritten(before, 0, 0, 3);
    }
    assertArrayEquals(d, read(client, base.child("allOff")));
  }

  @Test
  public void aSocketThatCannotBeReachedSendsTheBlocksThroughTheRpc() throws IOException {
    Path notASocket = Files.createTempFile("strata-not-a-socket", "");
    try (WorkerBlockIO io = new WorkerBlockIO(() -> withSocket(notASocket.toString()), true,
            TIMEOUT);
        StrataClient c = clientOver(io)) {
      StrataPath f = base.child("unreachable");
      byte[] d = data(2 * MIB + 3, 3);
      long[] before = counters();
      write(c, f, d);
      assertWritten(before, 0, 0, 3);
      assertArrayEquals(d, read(client, f));
    } finally {
      Files.delete(notASocket);
    }
  }

  @Test
  public void aWorkerThatDoesNotWriteShortCircuitGetsTheBlocksThroughTheRpc() throws Exception {
    // A worker from before short-circuit writes: it takes the request for a read of no block.
    try (FakeScWorker old = new FakeScWorker(r -> ShortCircuitResponse.newBuilder()
            .setError("short-circuit: no such block").build());
        WorkerBlockIO io = new WorkerBlockIO(() -> withFake(old), true, TIMEOUT);
        StrataClient c = clientOver(io)) {
      StrataPath f = base.child("old");
      // 1 MiB blocks: each is asked for at its end (with its length), and a refusal sends its
      // bytes, held meanwhile, to a stream; 4 MiB blocks: each is asked for once a buffer is
      // full, and the stream takes the rest as it comes.
      byte[] d = data(2 * MIB + 3, 4);
      long[] before = counters();
      write(c, f, d);
      assertWritten(before, 0, 0, 3);
      assertEquals("each block was asked for short-circuit first", 3, old.received().size());
      assertArrayEquals(d, read(client, f));
      StrataPath big = base.child("oldBig");
      byte[] db = data(5 * MIB + 3, 5);
      before = counters();
      try (FileWriter w = c.create(big, new CreateOptions(0644, true, true, 0, 4 * MIB))) {
        w.write(db);
      }
      assertWritten(before, 0, 0, 2);
      assertEquals(5, old.received().size());
      assertTrue(old.received().stream().allMatch(r -> r.request().hasWrite()));
      assertArrayEquals(db, read(client, big));
    }
  }

  @Test
  public void aRefusedTokenFailsTheWriteAsTheRpcWould() throws IOException {
    WriteTarget t = new WriteTarget(base.child("refused"), "nosuch://bucket", 4242, MIB, 4096,
        "");
    Class<? extends IOException> rpc;
    try (WorkerSet ws = new WorkerSet(WorkerDataPathTest::realWorkers, null, false, TIMEOUT)) {
      rpc = assertThrows(IOException.class, () -> writeBlock(new WorkerBlockIO(ws), t))
          .getClass();
    }
    long[] before = counters();
    try (WorkerBlockIO io = new WorkerBlockIO(WorkerDataPathTest::realWorkers, true, TIMEOUT)) {
      IOException e = assertThrows(IOException.class, () -> writeBlock(io, t));
      assertEquals(e.toString(), rpc, e.getClass());
      assertTrue(e.getMessage(), e.getMessage().contains("refused"));
    }
    assertWritten(before, 0, 0, 0);
  }

  private static void writeBlock(BlockIO io, WriteTarget t) throws IOException {
    BlockWriter w = io.openWriter(t);
    try {
      w.write(new byte[3000], 0, 3000);
      w.finish();
    } finally {
      w.abort();
    }
  }

  @Test
  public void aWriterThatFailsMidBlockCommitsNothingOfIt() throws IOException {
    try (WorkerBlockIO real = new WorkerBlockIO(WorkerDataPathTest::realWorkers, true, TIMEOUT);
        StrataClient c = StrataClient.connect(SERVER.clientConfig()
            .blockIO(new FailingAt(real, MIB + MIB / 2)).build())) {
      StrataPath f = base.child("failed");
      long[] before = counters();
      IOException e = assertThrows(IOException.class, () -> write(c, f, data(3 * MIB, 5)));
      assertTrue(e.getMessage(), e.getMessage().contains("injected"));
      assertThrows(StrataFileNotFoundException.class, () -> client.getFileStatus(f));
      // The first block was committed short-circuit before the failure; the second, half
      // written into its cache file, was abandoned.
      long[] now = counters();
      assertEquals(1, now[0] - before[0]);
      assertEquals(MIB, now[1] - before[1]);
    }
  }

  /**
   * The data path {@code real}, whose writers fail once a file's {@code at}th byte comes. The
   * failure waits for the blocks finished before it to be committed (their answers come in the
   * background), so that which blocks were is certain: otherwise the failure's abort races the
   * worker's commit of the block before.
   */
  private static final class FailingAt implements BlockIO {
    private final BlockIO real;
    private final long at;
    private long written;
    private final List<CompletableFuture<List<BlockExtent>>> finished = new ArrayList<>();

    FailingAt(BlockIO real, long at) {
      this.real = real;
      this.at = at;
    }

    @Override
    public BlockWriter openWriter(WriteTarget t) throws IOException {
      BlockWriter w = real.openWriter(t);
      assertTrue(w.toString(), w instanceof ShortCircuitBlockWriter);
      return new BlockWriter() {
        @Override
        public void write(byte[] b, int off, int len) throws IOException {
          int n = (int) Math.min(len, at - written);
          w.write(b, off, n);
          written += n;
          if (n < len) {
            for (CompletableFuture<List<BlockExtent>> f : finished) {
              f.handle((v, err) -> null).join();
            }
            throw new IOException("injected: the writer failed at byte " + at);
          }
        }

        @Override
        public List<BlockExtent> finish() throws IOException {
          return w.finish();
        }

        @Override
        public CompletableFuture<List<BlockExtent>> finishAsync() {
          CompletableFuture<List<BlockExtent>> f = w.finishAsync();
          finished.add(f);
          return f;
        }

        @Override
        public void abort() {
          w.abort();
        }
      };
    }

    @Override
    public BlockReader openReader(ReadTarget t) throws IOException {
      return real.openReader(t);
    }
  }

  private static List<WorkerInfo> with(WorkerInfo first, List<WorkerInfo> rest) {
    List<WorkerInfo> out = new ArrayList<>();
    out.add(first);
    out.addAll(rest);
    return out;
  }
}
