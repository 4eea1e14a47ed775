package io.strata.core.worker;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import io.grpc.ManagedChannel;
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
import io.strata.core.error.StrataFileNotFoundException;
import io.strata.core.rpc.Channels;
import io.strata.core.rpc.HostPort;
import io.strata.core.rpc.Tls;
import io.strata.core.testing.DevClusterRule;
import io.strata.proto.v1.ListWorkersRequest;
import io.strata.proto.v1.MetaServiceGrpc;
import io.strata.proto.v1.ShortCircuitResponse;
import io.strata.proto.v1.WorkerInfo;
import io.strata.proto.v1.WorkerStats;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
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
 * Short-circuit writes through the client against a real dev server, whose worker runs on this
 * host: which path each block took shows in the worker's counters ({@code
 * short_circuit_blocks_written} and {@code short_circuit_bytes_written}); blocks through the RPC
 * leave them be.
 */
public class ShortCircuitWriteTest {
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

  private static byte[] data(int n, long seed) {
    byte[] b = new byte[n];
    new Random(seed).nextBytes(b);
    return b;
  }

  /** Writes {@code d} to {@code p} in 1 MiB blocks, in uneven pieces. */
  private static void write(StrataClient c, StrataPath p, byte[] d) throws IOException {
    try (FileWriter w = c.create(p, new CreateOptions(0644, true, true, 0, MIB))) {
      int step = 1000;
      for (int off = 0; off < d.length; step = step * 3 + 7) {
        int n = Math.min(step, d.length - off);
        w.write(d, off, n);
        off += n;
      }
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

  private List<WorkerInfo> realWorkers() {
    return meta.listWorkers(ListWorkersRequest.getDefaultInstance()).getWorkersList();
  }

  /** The live workers, each with its socket at {@code socket}. */
  private List<WorkerInfo> withSocket(String socket) {
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
    try (WorkerBlockIO io = new WorkerBlockIO(() -> withSocket(notASocket.toString()),
            WorkerSet.localHostName(), true, TIMEOUT);
        StrataClient c = StrataClient.connect(SERVER.clientConfig().blockIO(io).build())) {
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
        WorkerBlockIO io = new WorkerBlockIO(() -> withSocket(old.socket().toString()),
            WorkerSet.localHostName(), true, TIMEOUT);
        StrataClient c = StrataClient.connect(SERVER.clientConfig().blockIO(io).build())) {
      StrataPath f = base.child("old");
      byte[] d = data(2 * MIB + 3, 4);
      long[] before = counters();
      write(c, f, d);
      assertWritten(before, 0, 0, 3);
      assertEquals("each block was asked for short-circuit first", 3, old.received().size());
      assertTrue(old.received().stream().allMatch(r -> r.request().hasWrite()));
      assertArrayEquals(d, read(client, f));
    }
  }

  @Test
  public void aRefusedTokenFailsTheWriteAsTheRpcWould() throws IOException {
    WriteTarget t = new WriteTarget(base.child("refused"), "nosuch://bucket", 4242, MIB, 4096,
        "");
    Class<? extends IOException> rpc;
    try (WorkerSet ws = new WorkerSet(this::realWorkers, "me", true, TIMEOUT)) {
      rpc = assertThrows(IOException.class, () -> writeBlock(new WorkerBlockIO(ws), t))
          .getClass();
    }
    long[] before = counters();
    try (WorkerBlockIO io = new WorkerBlockIO(this::realWorkers, WorkerSet.localHostName(),
        true, TIMEOUT)) {
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
    try (WorkerBlockIO real = new WorkerBlockIO(this::realWorkers, WorkerSet.localHostName(),
            true, TIMEOUT);
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

  /** The data path {@code real}, whose writers fail once a file's {@code at}th byte comes. */
  private static final class FailingAt implements BlockIO {
    private final BlockIO real;
    private final long at;
    private long written;

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
            throw new IOException("injected: the writer failed at byte " + at);
          }
        }

        @Override
        public List<BlockExtent> finish() throws IOException {
          return w.finish();
        }

        @Override
        public CompletableFuture<List<BlockExtent>> finishAsync() {
          return w.finishAsync();
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
}
