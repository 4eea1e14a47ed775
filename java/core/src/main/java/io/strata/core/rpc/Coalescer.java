package io.strata.core.rpc;

import com.google.protobuf.InvalidProtocolBufferException;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import io.strata.core.error.Op;
import io.strata.proto.v1.BatchCall;
import io.strata.proto.v1.BatchRequest;
import io.strata.proto.v1.BatchResponse;
import io.strata.proto.v1.BatchResult;
import io.strata.proto.v1.Header;
import io.strata.proto.v1.MetaServiceGrpc;
import java.io.Closeable;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Sends the calls of concurrent threads together, in {@code Batch} RPCs: the Java port of the Go
 * client's coalescer (internal/client/coalesce.go, docs/architecture.md "Batches").
 *
 * <p>A call made while fewer than {@code max} RPCs of this coalescer (calls alone or batches) are
 * in flight, and none queued, goes at once, alone, through {@link MetaCaller#call}: a lone caller
 * waits for nothing. A call made while {@code max} are in flight queues. When one of them
 * returns, its place in flight goes to the queue: up to {@value #MAX_BATCH_CALLS} queued calls
 * leave as one Batch, sent by a sender thread through {@link MetaCaller#callForMany}, which
 * follows the leader and retries it as any call (resending the very same requests, so that the
 * service dedupes the mutations by request id). The sender then sends what queued meanwhile,
 * batch after batch, until the queue is empty, and frees the place. Under load one round trip
 * thus carries many calls, and the service spends its CPU on the calls rather than on the RPCs.
 *
 * <p>A mutation's first send, alone or in a batch, is marked {@code Header.first_attempt}, so
 * that the service need not look its request id up; every later send of it (a retry of its RPC
 * or of its batch, or its call made again alone) is not.
 *
 * <p>Each caller gets its own answer: its result, or the exception its call alone would have
 * met, worded for its own operation and path, the failure of a whole batch included. A call that
 * met UNAVAILABLE inside a batch (the member lost the lead midway) is made again alone, through
 * {@link MetaCaller#call}, which finds the leader. A caller interrupted while it waits gives up:
 * its call does not leave if it had not (a call that had left may still be applied, as an
 * interrupted call alone may). {@link #close} fails the calls still queued.
 *
 * <p>Safe for concurrent use.
 */
public final class Coalescer implements Closeable {
  /** The most calls one batch carries (the service takes up to 1,024). */
  static final int MAX_BATCH_CALLS = 256;

  private final MetaCaller meta;
  private final int max;
  private final ExecutorService senders;
  private final AtomicLong sent = new AtomicLong();

  private final Object mu = new Object();
  // Guarded by mu; every change of either notifies mu (awaitState).
  private final Deque<Queued> pending = new ArrayDeque<>();
  private int inFlight;
  // Guarded by mu.
  private boolean closed;

  /**
   * Creates a coalescer that keeps at most {@code max} RPCs in flight through {@code meta} (0 or
   * less: every call goes alone, at once); its sender threads are named {@code threadName-N}.
   */
  public Coalescer(MetaCaller meta, int max, String threadName) {
    this.meta = meta;
    this.max = max;
    AtomicInteger n = new AtomicInteger();
    this.senders = Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, threadName + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    });
  }

  /**
   * Makes {@code call}, alone or in a batch, and returns its result, of the call's kind; {@code
   * op} on {@code what} (a path) names it in errors.
   */
  public BatchResult call(Op op, String what, BatchCall call) throws IOException {
    BatchCall first = firstSend(call);
    if (max <= 0) {
      return alone(op, what, first, call);
    }
    Queued q = new Queued(first, call);
    boolean queued;
    synchronized (mu) {
      if (closed) {
        throw MetaCaller.closed(op, what);
      }
      queued = inFlight >= max || !pending.isEmpty();
      if (queued) {
        pending.add(q);
      } else {
        inFlight++;
      }
      mu.notifyAll();
    }
    if (queued) {
      return answer(op, what, q);
    }
    try {
      return alone(op, what, first, call);
    } finally {
      release();
    }
  }

  /** Number of Batch RPCs sent (for tests and metrics). */
  public long batchesSent() {
    return sent.get();
  }

  /**
   * Fails the calls still queued, and lets the sender threads end: each finishes the batch it is
   * sending (the {@link MetaCaller}, closed next, ends it), finds the queue empty and stops.
   */
  @Override
  public void close() {
    List<Queued> failed;
    synchronized (mu) {
      if (closed) {
        return;
      }
      closed = true;
      failed = List.copyOf(pending);
      pending.clear();
      senders.shutdown();
      mu.notifyAll();
    }
    failed.forEach(q -> q.fail(MetaCaller.Failure.CLOSED));
  }

  /**
   * Waits until {@code queued} calls wait in the queue and {@code inFlight} RPCs are in flight;
   * fails after {@code bound} (a bound for a broken test, not a synchronisation). For tests.
   */
  void awaitState(int queued, int inFlight, Duration bound) throws InterruptedException {
    long until = System.nanoTime() + bound.toNanos();
    synchronized (mu) {
      while (pending.size() != queued || this.inFlight != inFlight) {
        long left = until - System.nanoTime();
        if (left <= 0) {
          throw new AssertionError(pending.size() + " calls queued and " + this.inFlight
              + " in flight, want " + queued + " and " + inFlight);
        }
        TimeUnit.NANOSECONDS.timedWait(mu, left);
      }
    }
  }

  /**
   * Waits until {@code queued} calls wait in the queue, however many RPCs are in flight; fails
   * after {@code bound}. For tests (StrataClient's, which run the client scripts).
   */
  public void awaitQueued(int queued, Duration bound) throws InterruptedException {
    long until = System.nanoTime() + bound.toNanos();
    synchronized (mu) {
      while (pending.size() != queued) {
        long left = until - System.nanoTime();
        if (left <= 0) {
          throw new AssertionError(pending.size() + " calls queued, want " + queued);
        }
        TimeUnit.NANOSECONDS.timedWait(mu, left);
      }
    }
  }

  /** Makes the call alone: {@code first} on its first attempt, {@code again} on later ones. */
  private BatchResult alone(Op op, String what, BatchCall first, BatchCall again)
      throws IOException {
    return meta.call(op, what, new Sends<>(first, again, Coalescer::alone));
  }

  /** Makes {@code c} as an RPC of its own; its answer comes as a batch would have it. */
  private static BatchResult alone(MetaCaller.Unary u, BatchCall c) {
    BatchResult.Builder r = BatchResult.newBuilder();
    switch (c.getCallCase()) {
      case GET_FILE_STATUS -> r.setGetFileStatus(
          u.call(MetaServiceGrpc.getGetFileStatusMethod(), c.getGetFileStatus()));
      case OPEN -> r.setOpen(u.call(MetaServiceGrpc.getOpenMethod(), c.getOpen()));
      case MKDIRS -> r.setMkdirs(u.call(MetaServiceGrpc.getMkdirsMethod(), c.getMkdirs()));
      case CREATE -> r.setCreate(u.call(MetaServiceGrpc.getCreateMethod(), c.getCreate()));
      case COMPLETE -> r.setComplete(
          u.call(MetaServiceGrpc.getCompleteMethod(), c.getComplete()));
      case RENAME -> r.setRename(u.call(MetaServiceGrpc.getRenameMethod(), c.getRename()));
      case DELETE -> r.setDelete(u.call(MetaServiceGrpc.getDeleteMethod(), c.getDelete()));
      case CALL_NOT_SET -> throw new IllegalArgumentException("a BatchCall without a call");
    }
    return r.build();
  }

  /**
   * Hands a finished RPC's place in flight to the calls that queued meanwhile, or frees it.
   *
   * <p>NB: the batch is handed to a sender thread, not sent by this one, whose caller would
   * otherwise wait a round trip more for its own answer; and under mu, so that {@link #close}
   * cannot shut the senders down between the two.
   */
  private void release() {
    synchronized (mu) {
      List<Queued> batch = nextLocked();
      if (batch != null) {
        senders.execute(() -> run(batch));
      }
    }
  }

  /**
   * Sends {@code batch}, then what queued meanwhile, until nothing waits.
   *
   * <p>NB: once a batch is answered, the sender yields the processor before it takes the next
   * one. The callers just answered mostly make their next call at once; yielding lets them queue
   * it, so that it leaves now, in the next batch, rather than one round trip later in the one
   * after (the Go client's runtime.Gosched; there it halved the batches sent at 64 threads).
   */
  private void run(List<Queued> batch) {
    for (List<Queued> b = batch; b != null; b = next()) {
      send(b);
      Thread.yield();
    }
  }

  private List<Queued> next() {
    synchronized (mu) {
      return nextLocked();
    }
  }

  /** Takes the next batch, or frees the place in flight (null) when nothing waits. */
  private List<Queued> nextLocked() {
    mu.notifyAll();
    if (pending.isEmpty()) {
      inFlight--;
      return null;
    }
    List<Queued> batch = new ArrayList<>(Math.min(pending.size(), MAX_BATCH_CALLS));
    while (!pending.isEmpty() && batch.size() < MAX_BATCH_CALLS) {
      batch.add(pending.poll());
    }
    return batch;
  }

  /** Makes {@code batch} as one Batch RPC and answers its callers. */
  private void send(List<Queued> batch) {
    BatchRequest.Builder first = BatchRequest.newBuilder();
    BatchRequest.Builder again = BatchRequest.newBuilder();
    for (Queued q : batch) {
      first.addCalls(q.first);
      again.addCalls(q.call);
    }
    sent.incrementAndGet();
    BatchResponse resp;
    try {
      resp = meta.callForMany(new Sends<>(first.build(), again.build(),
          (u, req) -> u.call(MetaServiceGrpc.getBatchMethod(), req)));
    } catch (MetaCaller.Failure f) {
      batch.forEach(q -> q.fail(f));
      return;
    } catch (RuntimeException e) {
      // NB: a bug, not an answer; the callers must hear of it all the same, or they would wait
      // for ever, and the sender must go on, or its place in flight would never be freed.
      batch.forEach(q -> q.fail(new MetaCaller.Failure(
          (op, what) -> new IOException(MetaCaller.verb(op) + " " + what + ": " + e, e))));
      return;
    }
    if (resp.getResultsCount() != batch.size()) {
      BatchResult wrong = failed(Status.INTERNAL.withDescription(String.format(
          java.util.Locale.ROOT, "a batch of %d calls got %d results", batch.size(),
          resp.getResultsCount())));
      batch.forEach(q -> q.answer(wrong));
      return;
    }
    for (int i = 0; i < batch.size(); i++) {
      batch.get(i).answer(resp.getResults(i));
    }
  }

  private static BatchResult failed(Status st) {
    return BatchResult.newBuilder()
        .setError(StatusProto.fromStatusAndTrailers(st, null).toByteString()).build();
  }

  /** Waits for {@code q}'s answer, and returns its result or throws its error. */
  private BatchResult answer(Op op, String what, Queued q) throws IOException {
    try {
      q.done.await();
    } catch (InterruptedException e) {
      synchronized (mu) {
        if (pending.remove(q)) {
          mu.notifyAll();
        }
      }
      Thread.currentThread().interrupt();
      InterruptedIOException i = new InterruptedIOException(
          MetaCaller.verb(op) + " " + what + ": interrupted while waiting for its batch");
      i.initCause(e);
      throw i;
    }
    if (q.failure != null) {
      throw q.failure.forCall(op, what);
    }
    BatchResult r = q.result;
    if (!r.getError().isEmpty()) {
      StatusRuntimeException e = errorOf(r);
      if (e.getStatus().getCode() == Status.Code.UNAVAILABLE) {
        // The member lost the lead midway: the call looks for the leader on its own.
        return alone(op, what, q.call, q.call);
      }
      throw meta.translate(e, op, what);
    }
    if (!r.getResultCase().name().equals(q.call.getCallCase().name())) {
      throw meta.translate(Status.INTERNAL
          .withDescription("a batch result of another kind than its call").asRuntimeException(),
          op, what);
    }
    return r;
  }

  /** The status a batch result's error holds, as the call alone would have failed with it. */
  private static StatusRuntimeException errorOf(BatchResult r) {
    try {
      return StatusProto.toStatusRuntimeException(com.google.rpc.Status.parseFrom(r.getError()));
    } catch (InvalidProtocolBufferException e) {
      return Status.INTERNAL.withDescription("a batch result's error: " + e.getMessage())
          .withCause(e).asRuntimeException();
    }
  }

  /**
   * {@code call} as its first send carries it: a mutation (a call with a request id) marked
   * {@code first_attempt}; a read as it is. NB: by kind, not through protobuf's reflection,
   * which cost a few percent of a call's CPU in the client.
   */
  private static BatchCall firstSend(BatchCall call) {
    BatchCall.Builder b = switch (call.getCallCase()) {
      case MKDIRS -> isNew(call.getMkdirs().getHeader()) ? call.toBuilder().setMkdirs(
          call.getMkdirs().toBuilder().setHeader(first(call.getMkdirs().getHeader()))) : null;
      case CREATE -> isNew(call.getCreate().getHeader()) ? call.toBuilder().setCreate(
          call.getCreate().toBuilder().setHeader(first(call.getCreate().getHeader()))) : null;
      case COMPLETE -> isNew(call.getComplete().getHeader()) ? call.toBuilder().setComplete(
          call.getComplete().toBuilder().setHeader(first(call.getComplete().getHeader())))
          : null;
      case RENAME -> isNew(call.getRename().getHeader()) ? call.toBuilder().setRename(
          call.getRename().toBuilder().setHeader(first(call.getRename().getHeader()))) : null;
      case DELETE -> isNew(call.getDelete().getHeader()) ? call.toBuilder().setDelete(
          call.getDelete().toBuilder().setHeader(first(call.getDelete().getHeader()))) : null;
      case GET_FILE_STATUS, OPEN, CALL_NOT_SET -> null;
    };
    return b == null ? call : b.build();
  }

  /** Whether a call with header {@code h} is a mutation, which carries a request id. */
  private static boolean isNew(Header h) {
    return !h.getRequestId().isEmpty();
  }

  private static Header first(Header h) {
    return h.toBuilder().setFirstAttempt(true).build();
  }

  /**
   * A call waiting in or for a batch: {@code first} is how its batch's first send carries it,
   * {@code call} how later ones do. Its answer, a result or a failure, is set once, before
   * {@code done} opens, and read after (the latch orders the two).
   */
  private static final class Queued {
    final BatchCall first;
    final BatchCall call;
    final CountDownLatch done = new CountDownLatch(1);
    BatchResult result;
    MetaCaller.Failure failure;

    Queued(BatchCall first, BatchCall call) {
      this.first = first;
      this.call = call;
    }

    void answer(BatchResult r) {
      result = r;
      done.countDown();
    }

    void fail(MetaCaller.Failure f) {
      failure = f;
      done.countDown();
    }
  }
}
