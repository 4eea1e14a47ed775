package io.strata.core.worker;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import io.strata.core.StrataPath;
import io.strata.core.block.BlockExtent;
import io.strata.core.block.BlockWriter;
import io.strata.core.block.WriteTarget;
import io.strata.core.error.ServiceUnavailableException;
import io.strata.proto.v1.Block;
import io.strata.proto.v1.ShortCircuitRequest;
import io.strata.proto.v1.ShortCircuitResponse;
import io.strata.proto.v1.WorkerInfo;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/**
 * {@link ShortCircuitBlockWriter} against a fake worker socket ({@link FakeScWorker}) that
 * creates the block's file in a scratch directory and answers as each test says: the protocol
 * (header, with the block's length when it ends before a buffer fills; bytes into the named
 * file; commit on the same connection), the commit awaited without blocking the writer, the
 * connection pooled after it, abort, and the refusals that send the block through the RPC
 * instead (by the whole data path: {@code WorkerDataPathTest}).
 */
public class ShortCircuitBlockWriterTest {
  private static final int MIB = 1 << 20;
  private static final long BLOCK = 4 * MIB;
  private static final Duration TIMEOUT = Duration.ofSeconds(20);
  private static final long WAIT_SECONDS = 20;

  private WorkerSet workers;
  private FakeScWorker fake;
  private WorkerInfo worker;
  private final WriteTarget target = new WriteTarget(StrataPath.parse("/dir/file"),
      "file:///bucket", 42, BLOCK, 4096, "");

  @Before
  public void setUp() {
    workers = new WorkerSet(List::of, null, true, TIMEOUT);
  }

  @After
  public void tearDown() throws IOException {
    workers.close();
    if (fake != null) {
      fake.close();
    }
  }

  /** Starts the fake worker: writes get a new file; commits go to {@code commit}. */
  private void start(Function<FakeScWorker.Received, ShortCircuitResponse> commit)
      throws IOException {
    fake = new FakeScWorker(r -> {
      if (r.request().hasWrite()) {
        Path f = fake.dir().resolve("block-" + (fake.received().size() - 1)); // this request's
        try {
          Files.createFile(f);
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
        long length = r.request().getLength();
        return ShortCircuitResponse.newBuilder().setOk(true).setPath(f.toString())
            .setBlockSize(length > 0 ? length : r.request().getWrite().getBlockSize()).build();
      }
      return commit.apply(r);
    });
    worker = WorkerInfo.newBuilder().setId("w-fake").setAddress("127.0.0.1:1").setHost("me")
        .setUnixSocket(fake.socket().toString()).build();
  }

  /** A commit's answer: the block of the length committed. */
  private static ShortCircuitResponse stored(FakeScWorker.Received r) {
    return ShortCircuitResponse.newBuilder().setOk(true).setBlock(Block.newBuilder()
        .setBlockId(7).setLength(r.request().getCommit().getLength())).build();
  }

  /** Commits answered as {@link #stored} once {@code l} is counted down. */
  private static Function<FakeScWorker.Received, ShortCircuitResponse> heldUntil(
      CountDownLatch l) {
    return r -> {
      try {
        l.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return stored(r);
    };
  }

  /** The file the fake created for the write that was request {@code i}. */
  private Path fileOf(int i) {
    return fake.dir().resolve("block-" + i);
  }

  private static byte[] data(int n) {
    byte[] b = new byte[n];
    new Random(n).nextBytes(b);
    return b;
  }

  /** Writes {@code d} from {@code from} on in pieces of growing, uneven sizes. */
  private static void writeInPieces(BlockWriter w, byte[] d, int from) throws IOException {
    int step = 1000;
    for (int off = from; off < d.length; step = step * 3 + 7) {
      int n = Math.min(step, d.length - off);
      w.write(d, off, n);
      off += n;
    }
  }

  @Test
  public void aBlockGoesIntoTheWorkersFileAndTheCommitIsAwaitedInTheBackground()
      throws Exception {
    CountDownLatch answer = new CountDownLatch(1);
    start(heldUntil(answer));
    ShortCircuitBlockWriter w = ShortCircuitBlockWriter.open(workers, worker, target);
    byte[] d = data(2 * MIB + MIB / 2 + 1000);
    w.write(d, 0, ShortCircuit.WRITE_BUFFER);
    assertTrue("a buffer's worth is held until more comes", fake.received().isEmpty());
    writeInPieces(w, d, ShortCircuit.WRITE_BUFFER);
    ShortCircuitRequest header = fake.received().get(0).request();
    assertEquals(target.path().toString(), header.getWrite().getPath());
    assertEquals(42, header.getWrite().getInodeId());
    assertEquals("a block asked for before its end says no length", 0, header.getLength());
    CompletableFuture<List<BlockExtent>> f = w.finishAsync();
    assertFalse("finishAsync returned before the worker answered", f.isDone());
    answer.countDown();
    assertEquals(List.of(new BlockExtent(7, 0, d.length)), f.get(WAIT_SECONDS, TimeUnit.SECONDS));
    assertEquals(d.length, fake.received().get(1).request().getCommit().getLength());
    assertArrayEquals(d, Files.readAllBytes(fileOf(0)));

    // A block that ends before a buffer fills is asked for at its end, with its length, on the
    // connection the last commit gave back to the pool.
    ShortCircuitBlockWriter small = ShortCircuitBlockWriter.open(workers, worker, target);
    small.write(d, 0, 10);
    assertEquals(List.of(new BlockExtent(7, 0, 10)), small.finish());
    assertEquals(0, fake.received().get(2).conn());
    assertEquals(10, fake.received().get(2).request().getLength());
    assertArrayEquals(Arrays.copyOf(d, 10), Files.readAllBytes(fileOf(2)));
  }

  @Test
  public void abortClosesTheConnectionBeforeTheCommit() throws Exception {
    start(ShortCircuitBlockWriterTest::stored);
    ShortCircuitBlockWriter early = ShortCircuitBlockWriter.open(workers, worker, target);
    early.write(data(100), 0, 100);
    early.abort();
    assertThrows(IOException.class, () -> early.write(new byte[1], 0, 1));
    ShortCircuitBlockWriter w = ShortCircuitBlockWriter.open(workers, worker, target);
    byte[] d = data(ShortCircuit.WRITE_BUFFER + 1);
    w.write(d, 0, d.length);
    w.abort();
    w.abort();
    assertEquals("the connection ended with no commit", new FakeScWorker.Ended(0, 1),
        fake.ends().poll(WAIT_SECONDS, TimeUnit.SECONDS));
    assertEquals("the block aborted early was never asked for", 1, fake.received().size());
    assertThrows(IOException.class, () -> w.write(new byte[1], 0, 1));
    ExecutionException e = assertThrows(ExecutionException.class, () -> w.finishAsync().get());
    assertTrue(e.getCause().toString(), e.getCause() instanceof IOException);
  }

  @Test
  public void abortEndsAWaitForTheCommit() throws Exception {
    CountDownLatch never = new CountDownLatch(1);
    start(heldUntil(never));
    try {
      ShortCircuitBlockWriter w = ShortCircuitBlockWriter.open(workers, worker, target);
      w.write(data(1000), 0, 1000);
      CompletableFuture<List<BlockExtent>> f = w.finishAsync();
      w.abort();
      ExecutionException e = assertThrows(ExecutionException.class,
          () -> f.get(WAIT_SECONDS, TimeUnit.SECONDS));
      assertTrue(e.getCause().toString(), e.getCause() instanceof IOException);
    } finally {
      never.countDown();
    }
  }

  @Test
  public void moreThanABlockFails() throws Exception {
    start(ShortCircuitBlockWriterTest::stored);
    ShortCircuitBlockWriter w = ShortCircuitBlockWriter.open(workers, worker, target);
    byte[] d = data((int) BLOCK);
    w.write(d, 0, d.length);
    IOException e = assertThrows(IOException.class, () -> w.write(d, 0, 1));
    assertTrue(e.getMessage(), e.getMessage().contains("more than the block's"));
    w.abort();
  }

  @Test
  public void aCommitAnsweredWithAnotherLengthFails() throws Exception {
    start(r -> ShortCircuitResponse.newBuilder().setOk(true).setBlock(Block.newBuilder()
        .setBlockId(7).setLength(r.request().getCommit().getLength() - 1)).build());
    ShortCircuitBlockWriter w = ShortCircuitBlockWriter.open(workers, worker, target);
    w.write(data(5000), 0, 5000);
    ExecutionException e = assertThrows(ExecutionException.class,
        () -> w.finishAsync().get(WAIT_SECONDS, TimeUnit.SECONDS));
    assertTrue(e.getCause().getMessage(), e.getCause().getMessage().contains("stored 4999"));
  }

  @Test
  public void aBucketThatDidNotAnswerFailsTheCommitAsUnavailable() throws Exception {
    start(r -> ShortCircuitResponse.newBuilder().setError("upload block: timed out")
        .setUnavailable(true).build());
    ShortCircuitBlockWriter w = ShortCircuitBlockWriter.open(workers, worker, target);
    w.write(data(5000), 0, 5000);
    IOException e = assertThrows(IOException.class, w::finish);
    assertTrue(e.toString(), e instanceof ServiceUnavailableException);
    assertTrue(e.getMessage(), e.getMessage().contains("timed out"));
  }

  /** What a worker may answer a write with that sends the block through the RPC instead. */
  private void refused(ShortCircuitResponse answer) throws Exception {
    fake = new FakeScWorker(r -> answer);
    worker = WorkerInfo.newBuilder().setId("w-fake").setAddress("127.0.0.1:1").setHost("me")
        .setUnixSocket(fake.socket().toString()).build();
    assertNull(ShortCircuitBlockWriter.tryOpen(workers, worker, target, 0));
    assertTrue(fake.received().get(0).request().hasWrite());
    assertEquals("the connection is closed, not pooled", new FakeScWorker.Ended(0, 1),
        fake.ends().poll(WAIT_SECONDS, TimeUnit.SECONDS));
  }

  @Test
  public void aRefusalIsNoWriter() throws Exception {
    refused(ShortCircuitResponse.newBuilder().setError("permission denied").build());
  }

  @Test
  public void aWorkerFromBeforeShortCircuitWritesIsNoWriter() throws Exception {
    // It takes the request for a read of nothing.
    refused(ShortCircuitResponse.newBuilder().setOk(true).setPath("/cache/x.data").build());
  }

  @Test
  public void aFileThatCannotBeOpenedIsNoWriter() throws Exception {
    refused(ShortCircuitResponse.newBuilder().setOk(true).setPath("/nonexistent/dir/x.data")
        .setBlockSize(BLOCK).build());
  }

  @Test
  public void anUnreachableSocketIsNoWriter() throws Exception {
    Path notASocket = Files.createTempFile("strata-not-a-socket", "");
    try {
      worker = WorkerInfo.newBuilder().setId("w-fake").setAddress("127.0.0.1:1").setHost("me")
          .setUnixSocket(notASocket.toString()).build();
      assertNull(ShortCircuitBlockWriter.tryOpen(workers, worker, target, 0));
    } finally {
      Files.delete(notASocket);
    }
  }
}
