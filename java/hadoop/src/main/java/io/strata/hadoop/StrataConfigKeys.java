package io.strata.hadoop;

/** The configuration keys of the strata:// FileSystem (documented in docs/java.md). */
public final class StrataConfigKeys {
  /**
   * The namespace service: host:port, or a comma list of the members of its Raft group
   * (host1:port,host2:port,host3:port), of which the client finds and follows the leader.
   */
  public static final String META_ADDRESS = "fs.strata.meta.address";

  /**
   * How long a call keeps trying to reach the service's leader (other members, the same one
   * again, with backoff) after an attempt failed to (a time duration, such as 60s; 0 for a single
   * attempt); default 60 s.
   */
  public static final String META_RETRY_TIMEOUT = "fs.strata.meta.retry.timeout";

  /**
   * How long a FileSystem that has reached no member of the service yet waits for one, its calls'
   * retries included, before a call fails saying the service cannot be reached (a time duration,
   * such as 10s); default 3 s. Once a member was reached, {@link #META_RETRY_TIMEOUT} bounds a
   * failover instead.
   */
  public static final String META_CONNECT_TIMEOUT = "fs.strata.meta.connect.timeout";

  /**
   * How many calls of reads (getFileStatus, open) each FileSystem keeps in flight to the service;
   * the reads its threads make meanwhile wait, and leave together in one Batch RPC when one
   * returns. Default 2; 0 or -1: every read alone.
   */
  public static final String META_BATCHES_IN_FLIGHT = "fs.strata.meta.batches-in-flight";

  /**
   * How many calls of mutations (mkdirs, create, complete, rename, delete) each FileSystem keeps
   * in flight to the service, as {@link #META_BATCHES_IN_FLIGHT} for reads. Default 1; 0 or -1:
   * every mutation alone.
   */
  public static final String META_MUTATIONS_IN_FLIGHT = "fs.strata.meta.mutations-in-flight";

  /**
   * Whether the calls to the namespace service go over callwire, its framed transport for unary
   * calls, each written and read on the calling thread (default true); false: over gRPC, as
   * before (docs/java.md, "Transport").
   */
  public static final String META_CALLWIRE = "fs.strata.meta.callwire";

  /** Default of {@link #META_CALLWIRE}. */
  public static final boolean DEFAULT_META_CALLWIRE = true;

  /**
   * The token that proves who the client is (docs/security.md), as {@code strata admin token
   * create} prints it. Without it the client takes, in order: a Strata token among the current
   * Hadoop user's credentials (what a job's tasks carry: {@link
   * StrataFileSystem#getDelegationToken}), the file {@link #TOKEN_FILE} names, {@code
   * $STRATA_TOKEN}, the file {@code $STRATA_TOKEN_FILE} names, {@code ~/.strata/token}.
   */
  public static final String TOKEN = "fs.strata.token";

  /** A file holding the token (see {@link #TOKEN}). */
  public static final String TOKEN_FILE = "fs.strata.token.file";

  /**
   * The user to state when the client has no token; only a service started with
   * --insecure-no-auth believes it. Default: the current Hadoop user (UserGroupInformation).
   * With a token, the token's user is the client's and this is ignored.
   */
  public static final String USER = "fs.strata.user";

  /**
   * The groups to state for the user, a comma list; default: the current Hadoop user's groups
   * when {@link #USER} is not set, none when it is.
   */
  public static final String GROUPS = "fs.strata.groups";

  /**
   * Deadline of each attempt of a call to the service (a time duration, such as 60s); default
   * 60 s.
   */
  public static final String RPC_TIMEOUT = "fs.strata.rpc.timeout";

  /** Entries fetched per listing page, 1 to 10,000; default 1,000. */
  public static final String LIST_PAGE_SIZE = "fs.strata.list.page-size";

  /**
   * First pages of the directories a listing showed asked for ahead of their listings, at a
   * time, 0 to 64 (0: none, and no page of a listing is asked for ahead); default 8. A walk
   * (ls -R) then finds each directory's first page on its way. Such a page may be up to 500 ms
   * older than its listing (never older than this client's own last change).
   */
  public static final String LIST_PREFETCH = "fs.strata.list.prefetch";

  /**
   * Block size recorded for new files and reported as the default; unset, the service's
   * default (its {@code --block-size}), which is then what the client reports.
   */
  public static final String BLOCK_SIZE = "fs.strata.block.size";

  /** Replication recorded for new files by default; default 1 (the bucket keeps the data). */
  public static final String REPLICATION = "fs.strata.replication";

  /** Default replication: the service's default too. */
  public static final short DEFAULT_REPLICATION = 1;

  /**
   * Whether blocks whose home worker's socket this client reaches ({@link #SHORT_CIRCUIT_DIR})
   * are read short-circuit, from the worker's cache file (checked page by page with its CRC32C), rather than through the worker's RPC;
   * default true.
   */
  public static final String SHORT_CIRCUIT = "fs.strata.shortcircuit.enabled";

  /** Default of {@link #SHORT_CIRCUIT}. */
  public static final boolean DEFAULT_SHORT_CIRCUIT = true;

  /**
   * Whether blocks written to a worker on this host are written short-circuit, into the cache
   * file the worker creates for each, rather than streamed through the worker's RPC; default
   * true. Only with {@link #SHORT_CIRCUIT}, which turns both off.
   */
  public static final String SHORT_CIRCUIT_WRITE = "fs.strata.shortcircuit.write";

  /** Default of {@link #SHORT_CIRCUIT_WRITE}. */
  public static final boolean DEFAULT_SHORT_CIRCUIT_WRITE = true;

  /**
   * Where the workers' short-circuit sockets are shared into this client's container (a
   * worker's socket is looked for there by its file name; docs/deploy.md); default empty: at the
   * path each worker made it. A socket is used only once the worker behind it proved, by
   * signing a nonce with the key the namespace service lists for it, to be that worker: host
   * names play no part.
   */
  public static final String SHORT_CIRCUIT_DIR = "fs.strata.shortcircuit.dir";

  /**
   * The PEM CA bundle the service's and workers' TLS certificates are checked against (default
   * $STRATA_TLS_CA, else ./strata-data/tls/ca.pem if it exists, else the JVM's trusted roots).
   */
  public static final String TLS_CA = "fs.strata.tls.ca";

  /** Connect in plaintext, without TLS (default false, or $STRATA_PLAINTEXT=1). */
  public static final String TLS_PLAINTEXT = "fs.strata.tls.plaintext";

  /**
   * Bytes a sequential read fetches at a time (the input stream's buffer; reads at least this
   * large bypass it, and positioned reads always do); default 4 MiB, 0 for no buffer.
   */
  public static final String READ_BUFFER = "fs.strata.read.buffer";

  /** Default of {@link #READ_BUFFER}: the Go client's read-ahead. */
  public static final long DEFAULT_READ_BUFFER = 4L << 20;

  /**
   * Whether a create waits for the stream's first need of it (docs/java.md, "Deferred
   * creates"): a file closed with no more than the inline limit written and never flushed is then
   * created closed, content and all, in one call at close. The file is not visible to others
   * before then, and failures other than an existing file (overwrite=false) come at close;
   * default false, a file existing from create on as in HDFS.
   */
  public static final String CREATE_DEFERRED = "fs.strata.create.deferred";

  private StrataConfigKeys() {}
}
