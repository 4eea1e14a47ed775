package io.strata.core.worker;

import com.google.protobuf.ByteString;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.strata.core.block.BlockExtent;
import io.strata.core.block.BlockWriter;
import io.strata.core.block.WriteTarget;
import io.strata.core.error.Op;
import io.strata.core.error.ServiceUnavailableException;
import io.strata.core.error.StrataError;
import io.strata.proto.v1.Block;
import io.strata.proto.v1.WorkerInfo;
import io.strata.proto.v1.WriteHeader;
import io.strata.proto.v1.WriteRequest;
import io.strata.proto.v1.WriteResponse;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

/**
 * Content streaming to one worker ({@code WorkerService.Write}): a header, then the data in 1 MiB
 * messages; the worker cuts it into blocks (one, in block mode, where a file's writer opens a
 * stream per block), uploads them and answers with the block list once every block is in the
 * bucket. Sends respect gRPC flow control (a write waits while the
 * stream is not ready), so a writer holds about two messages in memory however fast it writes.
 * Each wait is bounded by the client's RPC timeout. Not safe for concurrent use (one writer per
 * file), except {@link #abort}.
 */
final class WorkerBlockWriter implements BlockWriter {
  /** The size of one data message, as in the Go client. */
  static final int CHUNK = 1 << 20;

  /**
   * Bytes the stream may hold unsent and still take another message (gRPC's default, 32 KiB,
   * lets only one 1 MiB message be in flight and halves the throughput).
   */
  static final int READY_THRESHOLD = 4 * CHUNK;

  private final WorkerInfo worker;
  private final WriteTarget target;
  private final long timeoutNanos;
  private final Object lock = new Object();
  private final byte[] chunk = new byte[CHUNK];
  private int count;
  private long sent;
  // Guarded by lock.
  private ClientCallStreamObserver<WriteRequest> requests;
  private WriteResponse response;
  private IOException failure;
  private boolean done;
  /** Completed (outside the lock) when the stream has ended, answered or failed. */
  private final CompletableFuture<Void> ended = new CompletableFuture<>();

  private WorkerBlockWriter(WorkerInfo worker, WriteTarget target, Duration timeout) {
    this.worker = worker;
    this.target = target;
    this.timeoutNanos = timeout.toNanos();
  }

  /**
   * Opens a write stream for {@code t} to the first worker in writer order that takes it,
   * refreshing the list of live workers once if none does.
   */
  static WorkerBlockWriter open(WorkerSet workers, WriteTarget t) throws IOException {
    String path = t.path().toString();
    List<String> errs = new ArrayList<>();
    IOException last = null;
    for (int attempt = 0; attempt < 2; attempt++) {
      List<WorkerInfo> live = workers.live(Op.WRITE, path, attempt > 0);
      for (WorkerInfo w : workers.writerOrder(live, t.inodeId())) {
        WorkerBlockWriter bw = new WorkerBlockWriter(w, t, workers.timeout());
        try {
          bw.start(workers);
          return bw;
        } catch (IOException e) {
          bw.abort();
          if (e instanceof StrataError && !(e instanceof ServiceUnavailableException)) {
            throw e; // the worker answered: the write itself is refused
          }
          // Not reached, or a temporary condition (its bucket unavailable): the next worker.
          errs.add(e.getMessage());
          last = e;
        }
      }
    }
    throw new ServiceUnavailableException("write " + path
        + ": no worker took the file's content: " + String.join("; ", errs), last);
  }

  /** Opens the stream, sends the header and waits until the worker can take data. */
  private void start(WorkerSet workers) throws IOException {
    workers.asyncStub(worker).withOnReadyThreshold(READY_THRESHOLD)
        .write(new ClientResponseObserver<WriteRequest, WriteResponse>() {
      @Override
      public void beforeStart(ClientCallStreamObserver<WriteRequest> s) {
        synchronized (lock) {
          requests = s;
        }
        s.setOnReadyHandler(WorkerBlockWriter.this::wake);
      }

      @Override
      public void onNext(WriteResponse r) {
        synchronized (lock) {
          response = r;
        }
      }

      @Override
      public void onError(Throwable t) {
        synchronized (lock) {
          if (failure == null) {
            failure = translate(t);
          }
          done = true;
          lock.notifyAll();
        }
        ended.complete(null);
      }

      @Override
      public void onCompleted() {
        synchronized (lock) {
          done = true;
          lock.notifyAll();
        }
        ended.complete(null);
      }
    });
    send(WriteRequest.newBuilder().setHeader(header(target)).build());
    // A worker that cannot be reached fails the call here, before any data is sent, so that
    // the next worker can take the file.
    awaitReady();
  }

  /** The header a worker is sent for {@code t}'s content, with the file's write token. */
  static WriteHeader header(WriteTarget t) {
    return WriteHeader.newBuilder().setStoreUri(t.storeUri()).setInodeId(t.inodeId())
        .setBlockSize(t.blockSize()).setPath(t.path().toString()).setObjectKey(t.objectKey())
        .setNamespace(t.path().namespace()).setBlockToken(t.token().get()).build();
  }

  @Override
  public void write(byte[] b, int off, int len) throws IOException {
    java.util.Objects.checkFromIndexSize(off, len, b.length);
    while (len > 0) {
      if (count == 0 && len >= CHUNK) {
        sendData(b, off, CHUNK);
        off += CHUNK;
        len -= CHUNK;
        continue;
      }
      int n = Math.min(len, CHUNK - count);
      System.arraycopy(b, off, chunk, count, n);
      count += n;
      off += n;
      len -= n;
      if (count == CHUNK) {
        sendData(chunk, 0, count);
        count = 0;
      }
    }
  }

  @Override
  public List<BlockExtent> finish() throws IOException {
    return BlockWriter.await(finishAsync(), this::abort);
  }

  /**
   * Sends what is left and half-closes the stream; the future completes once the worker
   * answered with the blocks (every one in the bucket), or failed, or did not answer within the
   * RPC timeout (the stream is then cancelled).
   */
  @Override
  public CompletableFuture<List<BlockExtent>> finishAsync() {
    try {
      if (count > 0) {
        sendData(chunk, 0, count);
        count = 0;
      }
      synchronized (lock) {
        checkFailed();
        requests.onCompleted();
      }
    } catch (IOException e) {
      return CompletableFuture.failedFuture(e);
    }
    return ended.orTimeout(timeoutNanos, TimeUnit.NANOSECONDS).handle((v, err) -> answer(err));
  }

  /** The blocks the worker answered with; {@code timedOut} is the wait's failure, if any. */
  private List<BlockExtent> answer(Throwable timedOut) {
    synchronized (lock) {
      if (timedOut != null && failure == null) {
        requests.cancel("timed out", null);
        failure = new SocketTimeoutException("write " + target.path() + ": worker "
            + worker.getId() + " at " + worker.getAddress() + " did not answer with the blocks"
            + " within " + Duration.ofNanos(timeoutNanos).toMillis() + " ms");
      }
      if (failure == null && response == null) {
        failure = new IOException("write " + target.path() + ": worker " + worker.getId()
            + " ended the stream without an answer");
      }
      if (failure == null && response.getLength() != sent) {
        failure = new IOException("write " + target.path() + ": worker " + worker.getId()
            + " stored " + response.getLength() + " bytes of " + sent);
      }
      if (failure != null) {
        throw new CompletionException(failure);
      }
      List<BlockExtent> out = new ArrayList<>(response.getBlocksCount());
      for (Block blk : response.getBlocksList()) {
        out.add(new BlockExtent(blk.getBlockId(), blk.getOffset(), blk.getLength()));
      }
      return out;
    }
  }

  @Override
  public void abort() {
    synchronized (lock) {
      if (requests != null && !done) {
        requests.cancel("the writer gave up", null);
      }
    }
  }

  private void sendData(byte[] b, int off, int len) throws IOException {
    awaitReady();
    send(WriteRequest.newBuilder().setData(ByteString.copyFrom(b, off, len)).build());
    sent += len;
  }

  private void send(WriteRequest r) throws IOException {
    synchronized (lock) {
      checkFailed();
      requests.onNext(r);
    }
  }

  /** Waits until the stream takes a message without buffering, or fails. */
  private void awaitReady() throws IOException {
    synchronized (lock) {
      long deadline = System.nanoTime() + timeoutNanos;
      while (true) {
        checkFailed();
        if (done) {
          throw new IOException("write " + target.path() + ": worker " + worker.getId()
              + " ended the stream early");
        }
        if (requests.isReady()) {
          return;
        }
        waitUntil(deadline, "take data");
      }
    }
  }

  /** Waits on the lock (held) until woken or {@code deadline}, which fails the stream. */
  private void waitUntil(long deadline, String what) throws IOException {
    long left = deadline - System.nanoTime();
    if (left <= 0) {
      requests.cancel("timed out", null);
      SocketTimeoutException e = new SocketTimeoutException("write " + target.path()
          + ": worker " + worker.getId() + " at " + worker.getAddress() + " did not " + what
          + " within " + Duration.ofNanos(timeoutNanos).toMillis() + " ms");
      failure = e;
      throw e;
    }
    try {
      lock.wait(Math.max(1, left / 1_000_000));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      requests.cancel("interrupted", e);
      throw new InterruptedIOException("write " + target.path() + ": interrupted");
    }
  }

  private void wake() {
    synchronized (lock) {
      lock.notifyAll();
    }
  }

  private void checkFailed() throws IOException {
    if (failure != null) {
      throw failure;
    }
  }

  private IOException translate(Throwable t) {
    if (t instanceof StatusRuntimeException) {
      return WorkerSet.errors(worker).translate((StatusRuntimeException) t, Op.WRITE,
          target.path().toString());
    }
    return new IOException("write " + target.path() + ": worker " + worker.getId() + ": " + t, t);
  }
}
