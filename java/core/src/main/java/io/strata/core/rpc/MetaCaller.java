package io.strata.core.rpc;

import com.google.protobuf.ByteString;
import io.grpc.CallOptions;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.strata.core.error.ErrorTranslator;
import io.strata.core.error.Op;
import java.io.Closeable;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.stream.Collectors;

/**
 * Sends every call of the namespace service to the leader of its Raft group, and is the only
 * layer of the client that retries them (STYLE rule 7).
 *
 * <p>It keeps one link per member, opened on first use: a gRPC channel, or callwire's
 * connections ({@link CallSocket}), which carry the same calls and fail with the same statuses.
 * It sends each call to the member it
 * last found leading (the first listed, to begin with). A failed attempt is sent again when
 * {@link ErrorTranslator#retryable} says so: to the leader a NOT_LEADER answer names, else (no
 * leader named, or a transport failure: the member is down, or did not answer within the
 * attempt's deadline) to the next member in the list. Once every member has been tried (a
 * round), the caller pauses, 10 ms doubling up to 500 ms with jitter, before the next round. Any
 * answer of the service (NOT_FOUND, ALREADY_EXISTS...) ends the call at once.
 *
 * <p>Each attempt has the deadline {@code attemptTimeout}. No attempt starts later than {@code
 * retryTimeout} after the call did, and retries are cut short at that instant; so a call fails
 * after about max(attemptTimeout, retryTimeout) at most, with {@link ErrorTranslator#gaveUp}'s
 * exception naming the members tried.
 *
 * <p>That budget is for a failover (a leader change, a member restarting). Until some member has
 * been reached (a call answered, or its channel connected), nothing may be listening at all: a
 * wrong address, a service not started. Then {@code connectTimeout} bounds the call, its
 * attempts included, and the exception says that the service could not be reached, naming each
 * member and its cause (as the Go client does, docs/errors.md).
 *
 * <p>A {@code Batch} of several callers' calls ({@link Coalescer}) is retried here like any
 * call ({@link #callForMany}); if it fails as a whole, each caller words the {@link Failure} for
 * its own operation and path.
 *
 * <p>NB: a retried mutation must be the very same request, with the same {@code
 * Header.request_id} ({@link #newRequestId}), so that the service, which applies a request id
 * once, answers a retry of a mutation it applied with its first answer instead of applying it
 * twice. Reads carry no id and are retried freely. (The one difference a resend may have:
 * {@code Header.first_attempt}, which {@link Coalescer} sets on a mutation's first send only.)
 *
 * <p>Safe for concurrent use.
 */
public final class MetaCaller implements Closeable {
  /** A call of the service, made through {@code u}, which has the attempt's member and deadline. */
  @FunctionalInterface
  public interface Call<T> {
    /** Runs the call; a failure is the StatusRuntimeException {@code u} throws. */
    T run(Unary u);
  }

  /**
   * Makes unary calls on one member with one attempt's deadline, over gRPC or callwire ({@link
   * CallSocket}): the transport is the caller's choice, not the call's.
   */
  public interface Unary {
    /**
     * Makes a call of {@code m} with {@code req} and returns its response; a failure is a
     * StatusRuntimeException, as a gRPC blocking stub throws.
     */
    <Q, R> R call(MethodDescriptor<Q, R> m, Q req);
  }

  /** How calls reach one member: its gRPC channel, or its callwire connections. */
  interface Link {
    /** The calls of one attempt, each answered within {@code timeoutNanos}. */
    Unary unary(long timeoutNanos);

    /** Whether a member was reached through this link: a channel connected, a call answered. */
    boolean connected();

    /** Called before an attempt: a link that failed to connect tries again at once. */
    default void retryNow() {}

    /** Starts closing: no new calls; calls under way may end. */
    void shutdown();

    /** Waits up to {@code nanos} for calls under way; whether they all ended. */
    boolean awaitTermination(long nanos) throws InterruptedException;

    /** Closes at once, failing calls under way. */
    void shutdownNow();
  }

  /** Waits between rounds; tests replace it to control time. */
  @FunctionalInterface
  interface Sleeper {
    void sleep(long nanos) throws InterruptedException;
  }

  /** First pause between rounds over the members. */
  static final long BACKOFF_MIN_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

  /** Longest pause between rounds over the members. */
  static final long BACKOFF_MAX_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

  /** Bytes of a request id: random, so that no two clients pick the same. */
  public static final int REQUEST_ID_BYTES = 16;

  private static final long REQUEST_ID_PREFIX = new SecureRandom().nextLong();
  private static final AtomicLong REQUEST_ID_COUNT = new AtomicLong();

  private final List<HostPort> members;
  private final Duration attemptTimeout;
  private final Duration retryTimeout;
  private final Duration connectTimeout;
  private final ErrorTranslator errors;
  private final Function<HostPort, Link> dial;
  private final LongSupplier nanoTime;
  private final Sleeper sleeper;

  /** The member the next call goes to; updated without mu, as a hint. */
  private final AtomicReference<HostPort> leader;

  /** Whether some member was reached once: failures since are failovers. */
  private volatile boolean reached;

  private final Object mu = new Object();
  // Guarded by mu.
  private final Map<HostPort, Link> open = new LinkedHashMap<>();
  private boolean closed;

  /**
   * Creates a caller for the service whose members are {@code members}; nothing is dialled
   * until the first call.
   */
  public MetaCaller(List<HostPort> members, Duration attemptTimeout, Duration retryTimeout,
      Duration connectTimeout) {
    this(members, attemptTimeout, retryTimeout, connectTimeout, Tls.plaintext(), null, false);
  }

  /**
   * Creates a caller for the service whose members are {@code members}, connecting with
   * {@code tls}, whose calls carry {@code token} (null: none), over callwire ({@link CallSocket})
   * if {@code callwire}, else over gRPC; nothing is dialled until the first call.
   */
  public MetaCaller(List<HostPort> members, Duration attemptTimeout, Duration retryTimeout,
      Duration connectTimeout, Tls tls, String token, boolean callwire) {
    this(members, attemptTimeout, retryTimeout, connectTimeout,
        callwire ? hp -> new CallSocket(hp, tls, token)
            : overGrpc(hp -> Channels.open(hp, tls, token)),
        System::nanoTime, TimeUnit.NANOSECONDS::sleep);
  }

  MetaCaller(List<HostPort> members, Duration attemptTimeout, Duration retryTimeout,
      Duration connectTimeout, Function<HostPort, Link> dial, LongSupplier nanoTime,
      Sleeper sleeper) {
    if (members.isEmpty()) {
      throw new IllegalArgumentException("no namespace service address");
    }
    this.members = List.copyOf(members);
    this.attemptTimeout = attemptTimeout;
    this.retryTimeout = retryTimeout;
    this.connectTimeout = connectTimeout;
    this.errors = new ErrorTranslator(
        this.members.stream().map(HostPort::toString).collect(Collectors.joining(",")));
    this.dial = dial;
    this.nanoTime = nanoTime;
    this.sleeper = sleeper;
    this.leader = new AtomicReference<>(this.members.get(0));
  }

  /**
   * Returns a new request id for a mutation: {@value #REQUEST_ID_BYTES} bytes, 8 random ones drawn
   * once per process and a counter. A process's ids sort together and in order, so that the
   * service, which keeps each mutation's answer under its request id, writes those keys next to one
   * another rather than all over its key space (a tenth less of a create's apply than random ids).
   */
  public static ByteString newRequestId() {
    return ByteString.copyFrom(
        ByteBuffer.allocate(REQUEST_ID_BYTES)
            .putLong(REQUEST_ID_PREFIX)
            .putLong(REQUEST_ID_COUNT.incrementAndGet())
            .array());
  }

  /** The member the next call goes to: the leader last found, or the first member. */
  public HostPort leader() {
    return leader.get();
  }

  /**
   * Runs {@code c} on the leader, following it across members, and returns its answer; {@code
   * op} on {@code what} (a path) names the call in errors.
   */
  public <T> T call(Op op, String what, Call<T> c) throws IOException {
    return call(op, what, attemptTimeout, retryTimeout, c);
  }

  /**
   * As {@link #call(Op, String, Call)}, with the attempt and retry timeouts both at most {@code
   * bound}: the call gives up after about {@code bound}.
   */
  public <T> T call(Op op, String what, Duration bound, Call<T> c) throws IOException {
    return call(op, what, min(attemptTimeout, bound), min(retryTimeout, bound), c);
  }

  /**
   * As {@link #call(Op, String, Call)} for a call made on behalf of several callers (a {@code
   * Batch}): its failure is left unworded, for {@link Failure#forCall} to word for each caller's
   * own operation and path.
   */
  public <T> T callForMany(Call<T> c) throws Failure {
    return run(attemptTimeout, retryTimeout, c);
  }

  /**
   * Returns the exception for {@code e}, an answer of the service that {@code op} on {@code
   * what} met inside a batch: the one it would have met alone.
   */
  public IOException translate(StatusRuntimeException e, Op op, String what) {
    return errors.translate(e, op, what);
  }

  private <T> T call(Op op, String what, Duration attempt, Duration retry, Call<T> c)
      throws IOException {
    try {
      return run(attempt, retry, c);
    } catch (Failure f) {
      throw f.forCall(op, what);
    }
  }

  private <T> T run(Duration attempt, Duration retry, Call<T> c) throws Failure {
    long start = nanoTime.getAsLong();
    boolean contacted = reached;
    long deadline = start + (contacted ? retry : min(retry, connectTimeout)).toNanos();
    HostPort target = leader();
    Search search = new Search(members, target, start);
    // Before contact an attempt waits no longer than the contact may: a connection that hangs
    // (a black-holed address) is no reason to wait the whole attempt deadline.
    long timeout = contacted ? attempt.toNanos()
        : Math.min(attempt.toNanos(), connectTimeout.toNanos());
    // The last failure that was an answer, not an attempt the retry
    // deadline cut short: what the caller is told when the search ends.
    StatusRuntimeException answer = null;
    // A member's NOT_LEADER: the group is there, electing. It names the outcome whatever the
    // last attempt met (a member down after it, say), as "found no leader".
    StatusRuntimeException noLeader = null;
    for (;;) {
      Link m = link(target);
      try {
        T r = c.run(m.unary(timeout));
        found(target);
        reached = true;
        return r;
      } catch (StatusRuntimeException e) {
        if (!contacted && m.connected()) {
          // A member is there: from now on a failure is a failover.
          contacted = reached = true;
          deadline = start + retry.toNanos();
        }
        if (!ErrorTranslator.retryable(e)) {
          throw new Failure((op, what) -> errors.translate(e, op, what));
        }
        boolean cutShort = timeout < attempt.toNanos()
            && e.getStatus().getCode() == io.grpc.Status.Code.DEADLINE_EXCEEDED;
        if (!cutShort || answer == null) {
          answer = e;
        }
        if (ErrorTranslator.isNotLeader(e)) {
          noLeader = e;
        }
        HostPort failed = target;
        target = search.next(failed, e);
        moveOn(failed, target);
        if (search.roundOver()) {
          long pause = search.pause();
          if (nanoTime.getAsLong() + pause >= deadline) {
            throw gaveUp(noLeader != null ? noLeader : answer, search);
          }
          sleep(pause);
        }
        long left = deadline - nanoTime.getAsLong();
        if (left <= 0) {
          throw gaveUp(noLeader != null ? noLeader : answer, search);
        }
        timeout = Math.min(attempt.toNanos(), left);
      }
    }
  }

  private Failure gaveUp(StatusRuntimeException last, Search search) {
    String tried = search.describe(nanoTime.getAsLong());
    return new Failure((op, what) -> errors.gaveUp(last, op, what, tried));
  }

  /** Makes {@code next} every caller's target if {@code failed} was. */
  private void moveOn(HostPort failed, HostPort next) {
    HostPort cur = leader.get();
    if (cur.equals(failed)) {
      leader.compareAndSet(cur, next);
    }
  }

  private void found(HostPort target) {
    if (!leader.get().equals(target)) {
      leader.set(target);
    }
  }

  private static java.util.Optional<HostPort> parse(String address) {
    try {
      return java.util.Optional.of(HostPort.parse(address));
    } catch (IllegalArgumentException e) {
      return java.util.Optional.empty();
    }
  }

  /**
   * The link to {@code hp}, opened now if it is not open. A link that failed to connect is told
   * to try again at once: this class paces the retries, not gRPC's reconnect backoff (which
   * grows to two minutes and would hide a member that came back).
   */
  private Link link(HostPort hp) throws Failure {
    synchronized (mu) {
      if (closed) {
        throw Failure.CLOSED;
      }
      Link m = open.get(hp);
      if (m == null) {
        m = dial.apply(hp);
        open.put(hp, m);
      } else {
        m.retryNow();
      }
      return m;
    }
  }

  private void sleep(long nanos) throws Failure {
    try {
      sleeper.sleep(nanos);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new Failure((op, what) -> {
        InterruptedIOException i = new InterruptedIOException(
            verb(op) + " " + what + ": interrupted while waiting for the leader");
        i.initCause(e);
        return i;
      });
    }
  }

  /** The exception of {@code op} on {@code what} made after the client was closed. */
  public static IOException closed(Op op, String what) {
    return new IOException(verb(op) + " " + what + ": the Strata client is closed");
  }

  /** How messages name {@code op}: "get_file_status". */
  static String verb(Op op) {
    return op.name().toLowerCase(java.util.Locale.ROOT);
  }

  private static Duration min(Duration a, Duration b) {
    return a.compareTo(b) <= 0 ? a : b;
  }

  /** Closes every link, waiting up to 5 s for calls under way. */
  @Override
  public void close() throws IOException {
    List<Link> links;
    synchronized (mu) {
      if (closed) {
        return;
      }
      closed = true;
      links = new ArrayList<>(open.values());
      open.clear();
    }
    links.forEach(Link::shutdown);
    try {
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
      for (Link l : links) {
        if (!l.awaitTermination(until - System.nanoTime())) {
          l.shutdownNow();
        }
      }
    } catch (InterruptedException e) {
      links.forEach(Link::shutdownNow);
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("closing the Strata client was interrupted");
    }
  }

  /**
   * Why a call failed, not yet worded for a caller: {@link #forCall} makes the exception that
   * one operation on one path gets, so that the failure of a batch reaches each of its callers as
   * the failure of its own call.
   *
   * <p>NB: no stack trace: it is a result, thrown between two frames of this package, and every
   * exception it words has the status it stands for as its cause.
   */
  public static final class Failure extends Exception {
    private static final long serialVersionUID = 1L;

    /** The failure of a call made after the client was closed. */
    static final Failure CLOSED = new Failure(MetaCaller::closed);

    private final transient Wording wording;

    Failure(Wording wording) {
      super(null, null, false, false);
      this.wording = wording;
    }

    /** Returns the exception that {@code op} on {@code what} (a path) fails with. */
    public IOException forCall(Op op, String what) {
      return wording.of(op, what);
    }
  }

  /** Words a failure for one operation on one path. */
  @FunctionalInterface
  interface Wording {
    IOException of(Op op, String what);
  }

  /** The links of {@code dial}'s gRPC channels (which {@link Channels#open} makes). */
  static Function<HostPort, Link> overGrpc(Function<HostPort, ManagedChannel> dial) {
    return hp -> new GrpcLink(dial.apply(hp));
  }

  /** A member's gRPC channel; its calls carry the token through the channel's interceptor. */
  private record GrpcLink(ManagedChannel channel) implements Link {
    @Override
    public Unary unary(long timeoutNanos) {
      CallOptions opts = CallOptions.DEFAULT.withDeadlineAfter(timeoutNanos, TimeUnit.NANOSECONDS);
      return new Unary() {
        @Override
        public <Q, R> R call(MethodDescriptor<Q, R> m, Q req) {
          return ClientCalls.blockingUnaryCall(channel, m, opts, req);
        }
      };
    }

    @Override
    public boolean connected() {
      return channel.getState(false) == ConnectivityState.READY;
    }

    @Override
    public void retryNow() {
      if (channel.getState(false) == ConnectivityState.TRANSIENT_FAILURE) {
        channel.resetConnectBackoff();
      }
    }

    @Override
    public void shutdown() {
      channel.shutdown();
    }

    @Override
    public boolean awaitTermination(long nanos) throws InterruptedException {
      return channel.awaitTermination(nanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public void shutdownNow() {
      channel.shutdownNow();
    }
  }

  /**
   * One call's search for the leader: which member to try next, when a round (every member
   * listed or named, each tried once) is over and a pause is due, and how each member failed.
   * A named leader not yet tried in the round goes first; then the listed members in order, from
   * the one after the last listed member tried, skipping those tried in the round.
   */
  private static final class Search {
    private final List<HostPort> members;
    private final long start;
    private final Set<HostPort> round = new HashSet<>();
    private final Map<HostPort, String> last = new LinkedHashMap<>();
    private int cursor;
    private int attempts;
    private boolean roundOver;
    private long backoff = BACKOFF_MIN_NANOS;

    Search(List<HostPort> members, HostPort first, long start) {
      this.members = members;
      this.start = start;
      int i = members.indexOf(first);
      // A leader from outside the list: the list is next, from its start.
      this.cursor = i >= 0 ? i : members.size() - 1;
      round.add(first);
    }

    /** Records that {@code failed} failed with {@code e}; returns the member to try next. */
    HostPort next(HostPort failed, StatusRuntimeException e) {
      last.put(failed, ErrorTranslator.outcome(e));
      attempts++;
      HostPort named = ErrorTranslator.leaderOf(e).flatMap(MetaCaller::parse).orElse(null);
      HostPort n = named != null && !round.contains(named) ? named : nextListed();
      roundOver = n == null;
      if (roundOver) {
        round.clear();
        n = named != null ? named : members.get(cursor = (cursor + 1) % members.size());
      }
      round.add(n);
      return n;
    }

    private HostPort nextListed() {
      for (int i = 1; i <= members.size(); i++) {
        int j = (cursor + i) % members.size();
        if (!round.contains(members.get(j))) {
          cursor = j;
          return members.get(j);
        }
      }
      return null;
    }

    /** Whether the member {@link #next} returned starts a new round: a pause is due first. */
    boolean roundOver() {
      return roundOver;
    }

    /** The pause before the next round: the backoff less up to half of it; the backoff grows. */
    long pause() {
      long p = backoff - ThreadLocalRandom.current().nextLong(backoff / 2 + 1);
      backoff = Math.min(2 * backoff, BACKOFF_MAX_NANOS);
      return p;
    }

    /** "h1:p1 (Connection refused), h2:p2 (not the leader...); 7 attempts in 1.2 s". */
    String describe(long now) {
      String s = last.entrySet().stream().map(en -> en.getKey() + " (" + en.getValue() + ")")
          .collect(Collectors.joining(", "));
      if (attempts > 1) {
        s += String.format(java.util.Locale.ROOT, "; %d attempts in %.1f s", attempts,
            (now - start) / 1e9);
      }
      return s;
    }
  }
}
