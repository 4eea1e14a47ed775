package io.strata.core;

import io.strata.core.block.BlockIO;
import io.strata.core.rpc.HostPort;
import io.strata.core.rpc.Tls;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/** How to reach the namespace service and who the client is. Immutable; see {@link Builder}. */
public final class ClientConfig {
  /** The service's lease soft limit is 60 s; renewing every 20 s keeps well inside it. */
  public static final Duration DEFAULT_LEASE_RENEW_INTERVAL = Duration.ofSeconds(20);

  /** Bound on every call, so an unresponsive service fails calls instead of hanging them. */
  public static final Duration DEFAULT_RPC_TIMEOUT = Duration.ofSeconds(60);

  /**
   * How long a call keeps looking for a member that answers (the leader) after its first attempt
   * failed to reach one; see {@link io.strata.core.rpc.MetaCaller}.
   */
  public static final Duration DEFAULT_RETRY_TIMEOUT = Duration.ofSeconds(60);

  /**
   * How long a client that has reached no member yet waits for one, its calls' retries included,
   * before it says that the service cannot be reached; see {@link
   * io.strata.core.rpc.MetaCaller}.
   */
  public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(3);

  /** Entries asked for per listing page (the service's default and a tenth of its maximum). */
  public static final int DEFAULT_LIST_PAGE_SIZE = 1000;
  /** Default of {@link #listPrefetch}. */
  public static final int DEFAULT_LIST_PREFETCH = 8;

  /**
   * RPCs of reads that a client keeps in flight before it coalesces the reads its threads make
   * into batches ({@link io.strata.core.rpc.Coalescer}).
   *
   * <p>NB: 2, where the Go client keeps 4: through the Hadoop API at 16 and 64 threads
   * (FsBench), 2 made as many stats as 4 and more than 1 at 64 threads, where the service
   * answers the reads of two batches on two cores (docs/benchmarks.md, "RPCs in flight in the
   * Java client").
   */
  public static final int DEFAULT_BATCHES_IN_FLIGHT = 2;

  /**
   * RPCs of mutations that a client keeps in flight before it coalesces the mutations its
   * threads make into batches.
   *
   * <p>NB: 1. Every RPC of mutations is a Raft entry of the service, which costs it the same
   * whatever it carries: through the Hadoop API (FsBench, callwire, two alternated pairs) 1 made
   * 8-18% more mutations a second than 2 at 4 threads and 15-36% more at 16, and as many at 64.
   */
  public static final int DEFAULT_MUTATIONS_IN_FLIGHT = 1;

  private final List<HostPort> members;
  private final StrataToken token;
  private final String user;
  private final List<String> groups;
  private final int umask;
  private final Duration rpcTimeout;
  private final Duration retryTimeout;
  private final Duration connectTimeout;
  private final Duration leaseRenewInterval;
  private final int listPageSize;
  private final int listPrefetch;
  private final int batchesInFlight;
  private final int mutationsInFlight;
  private final boolean shortCircuit;
  private final boolean shortCircuitWrites;
  private final String shortCircuitDir;
  private final boolean callwire;
  private final BlockIO blockIO;
  private final Tls tls;

  private ClientConfig(Builder b) {
    if (b.members.isEmpty()) {
      throw new IllegalArgumentException("no Strata namespace service address");
    }
    this.members = List.copyOf(b.members);
    this.token = b.token;
    if (b.token != null) {
      this.user = b.token.user();
      this.groups = List.copyOf(b.token.groups());
    } else {
      if (b.user == null || b.user.isEmpty()) {
        throw new IllegalArgumentException("no user");
      }
      this.user = b.user;
      this.groups = List.copyOf(b.groups);
    }
    this.umask = b.umask & 0777;
    this.rpcTimeout = b.rpcTimeout;
    this.retryTimeout = b.retryTimeout;
    this.connectTimeout = b.connectTimeout;
    this.leaseRenewInterval = b.leaseRenewInterval;
    this.listPageSize = b.listPageSize;
    this.listPrefetch = b.listPrefetch;
    this.batchesInFlight = b.batchesInFlight;
    this.mutationsInFlight = b.mutationsInFlight;
    this.shortCircuit = b.shortCircuit;
    this.shortCircuitWrites = b.shortCircuitWrites;
    this.shortCircuitDir = b.shortCircuitDir;
    this.callwire = b.callwire;
    this.blockIO = b.blockIO;
    this.tls = b.tls != null ? b.tls : Tls.fromEnvironment();
  }

  /** Returns a builder for the service at {@code addresses}, a comma list of host:port. */
  public static Builder builder(String addresses) {
    Builder b = new Builder();
    for (String a : addresses.split(",")) {
      if (!a.isBlank()) {
        b.members.add(HostPort.parse(a));
      }
    }
    return b;
  }

  /**
   * The members of the namespace service's Raft group (or its one address), in the order they
   * are tried until one names the leader.
   */
  public List<HostPort> members() {
    return members;
  }

  /** The user the client acts as (HDFS "simple" authentication: the client states it). */
  /**
   * The user the client acts as: its token's; without a token, the user a request names, which
   * only a service started with --insecure-no-auth believes.
   */
  public String user() {
    return user;
  }

  /** The token the client proves who it is with, sent with every call; empty: none. */
  public Optional<StrataToken> token() {
    return Optional.ofNullable(token);
  }

  /** The groups the client states for its user. */
  public List<String> groups() {
    return groups;
  }

  /** Bits masked off the permission of everything the client creates. */
  public int umask() {
    return umask;
  }

  /** The deadline of each attempt of a call. */
  public Duration rpcTimeout() {
    return rpcTimeout;
  }

  /**
   * How long after a call started it may still try another member (or the same one again) when
   * an attempt could not reach the leader; zero for a single attempt.
   */
  public Duration retryTimeout() {
    return retryTimeout;
  }

  /**
   * How long a call waits for a first member to be reached, when none was yet, before it fails
   * saying that the service cannot be reached.
   */
  public Duration connectTimeout() {
    return connectTimeout;
  }

  /** How often leases are renewed while files are open for writing. */
  public Duration leaseRenewInterval() {
    return leaseRenewInterval;
  }

  /** Entries asked for per listing page. */
  public int listPageSize() {
    return listPageSize;
  }

  /**
   * How many first pages of the directories a listing showed are asked for ahead of their
   * listings, at a time; 0: none, and no listing asks for its next page ahead either.
   */
  public int listPrefetch() {
    return listPrefetch;
  }

  /**
   * How many RPCs of reads (getFileStatus, open) the client keeps in flight: reads made while
   * that many are in flight queue, and leave together as one Batch RPC when one returns. 0 or
   * less: every read goes alone.
   */
  public int batchesInFlight() {
    return batchesInFlight;
  }

  /**
   * How many RPCs of mutations (mkdirs, create, complete, rename, delete) the client keeps in
   * flight, as {@link #batchesInFlight} for reads. 0 or less: every mutation goes alone.
   */
  public int mutationsInFlight() {
    return mutationsInFlight;
  }

  /**
   * Whether blocks whose home worker runs on this host are read short-circuit, from the
   * worker's cache file, rather than through its RPC.
   */
  public boolean shortCircuit() {
    return shortCircuit;
  }

  /**
   * Whether blocks written to a worker on this host are written short-circuit, into the
   * worker's cache file, rather than streamed through its RPC; only with {@link #shortCircuit}.
   */
  public boolean shortCircuitWrites() {
    return shortCircuitWrites;
  }

  /**
   * Where the workers' short-circuit sockets are shared into this client's container (a worker's
   * socket is looked for there by its name); empty: at the path each worker made it. Either way a
   * socket is used only once the worker behind it proved to be the worker the service lists.
   */
  public String shortCircuitDir() {
    return shortCircuitDir;
  }

  /**
   * Whether metadata calls go over callwire, the service's framed transport for unary calls, each
   * written and read on the calling thread (default); false: over gRPC, as every other call does
   * ({@link io.strata.core.rpc.MetaCaller}).
   */
  public boolean callwire() {
    return callwire;
  }

  /**
   * The data path set with {@link Builder#blockIO}; empty means the workers' ({@link
   * io.strata.core.worker.WorkerBlockIO}), which the client makes itself.
   */
  public Optional<BlockIO> blockIO() {
    return Optional.ofNullable(blockIO);
  }

  /**
   * How the client connects to the service and the workers: TLS unless plaintext was asked for
   * (docs/security.md); by default as the environment says ({@link Tls#fromEnvironment}).
   */
  public Tls tls() {
    return tls;
  }

  /** Builds a {@link ClientConfig}. Not safe for concurrent use. */
  public static final class Builder {
    private final List<HostPort> members = new ArrayList<>();
    private StrataToken token;
    private String user = System.getProperty("user.name");
    private Tls tls;
    private List<String> groups = List.of();
    private int umask = 0022;
    private Duration rpcTimeout = DEFAULT_RPC_TIMEOUT;
    private Duration retryTimeout = DEFAULT_RETRY_TIMEOUT;
    private Duration connectTimeout = DEFAULT_CONNECT_TIMEOUT;
    private Duration leaseRenewInterval = DEFAULT_LEASE_RENEW_INTERVAL;
    private int listPageSize = DEFAULT_LIST_PAGE_SIZE;
    private int listPrefetch = DEFAULT_LIST_PREFETCH;
    private int batchesInFlight = DEFAULT_BATCHES_IN_FLIGHT;
    private int mutationsInFlight = DEFAULT_MUTATIONS_IN_FLIGHT;
    private boolean shortCircuit = true;
    private boolean shortCircuitWrites = true;
    private String shortCircuitDir = "";
    private boolean callwire = true;
    private BlockIO blockIO;

    private Builder() {}

    /** Sets the user (default: the JVM's user.name). */
    /** The token to send (null: none); its user and groups are the client's. */
    public Builder token(StrataToken t) {
      this.token = t;
      return this;
    }

    public Builder user(String u) {
      this.user = u;
      return this;
    }

    /** Sets the groups stated for the user (default: none). */
    public Builder groups(List<String> g) {
      this.groups = List.copyOf(g);
      return this;
    }

    /** Sets the umask (default 022). */
    public Builder umask(int u) {
      this.umask = u;
      return this;
    }

    /** Sets the deadline of each attempt of a call (default 60 s). */
    public Builder rpcTimeout(Duration d) {
      this.rpcTimeout = positive(d, "rpc timeout");
      return this;
    }

    /**
     * Sets how long a call keeps trying to reach the leader (default 60 s; zero: one attempt,
     * no retry).
     */
    public Builder retryTimeout(Duration d) {
      if (d.isNegative()) {
        throw new IllegalArgumentException("retry timeout must not be negative: " + d);
      }
      this.retryTimeout = d;
      return this;
    }

    /**
     * Sets how long a client that reached no member yet waits for one (default 3 s): a wrong
     * address fails that soon.
     */
    public Builder connectTimeout(Duration d) {
      this.connectTimeout = positive(d, "connect timeout");
      return this;
    }

    /** Sets the lease renewal interval (default 20 s). */
    public Builder leaseRenewInterval(Duration d) {
      this.leaseRenewInterval = positive(d, "lease renew interval");
      return this;
    }

    /** Sets the listing page size, 1 to 10,000 (default 1,000). */
    public Builder listPageSize(int n) {
      if (n < 1 || n > 10_000) {
        throw new IllegalArgumentException("list page size " + n + " not in 1..10000");
      }
      this.listPageSize = n;
      return this;
    }

    /** Sets {@link ClientConfig#listPrefetch}, 0 to 64 (default 8). */
    public Builder listPrefetch(int n) {
      if (n < 0 || n > 64) {
        throw new IllegalArgumentException("list prefetch " + n + " not in 0..64");
      }
      this.listPrefetch = n;
      return this;
    }

    /**
     * Sets how many RPCs of reads are in flight before reads are coalesced into batches (default
     * 2; 0 or less: every read alone).
     */
    public Builder batchesInFlight(int n) {
      this.batchesInFlight = n;
      return this;
    }

    /**
     * Sets how many RPCs of mutations are in flight before mutations are coalesced into batches
     * (default 1; 0 or less: every mutation alone).
     */
    public Builder mutationsInFlight(int n) {
      this.mutationsInFlight = n;
      return this;
    }

    /** Turns short-circuit reads, and writes, on or off (default on). */
    public Builder shortCircuit(boolean on) {
      this.shortCircuit = on;
      return this;
    }

    /**
     * Turns short-circuit writes alone on or off (default on: as {@link #shortCircuit} says).
     */
    public Builder shortCircuitWrites(boolean on) {
      this.shortCircuitWrites = on;
      return this;
    }

    /** Looks for the workers' sockets in {@code dir} (default "": at their paths). */
    public Builder shortCircuitDir(String dir) {
      this.shortCircuitDir = dir == null ? "" : dir;
      return this;
    }

    /** Sends metadata calls over callwire (default) or, if false, over gRPC. */
    public Builder callwire(boolean on) {
      this.callwire = on;
      return this;
    }

    /**
     * Replaces the data path (default: the workers'). The client does not close a data path
     * set here.
     */
    public Builder blockIO(BlockIO io) {
      this.blockIO = Objects.requireNonNull(io, "blockIO");
      return this;
    }

    /** Sets how the client connects (default: {@link Tls#fromEnvironment}). */
    public Builder tls(Tls t) {
      this.tls = Objects.requireNonNull(t, "tls");
      return this;
    }

    /** Returns the configuration. */
    public ClientConfig build() {
      return new ClientConfig(this);
    }

    private static Duration positive(Duration d, String what) {
      if (d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException(what + " must be positive: " + d);
      }
      return d;
    }
  }
}
