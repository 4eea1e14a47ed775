package io.strata.core;

import com.google.protobuf.ByteString;
import io.grpc.MethodDescriptor;
import io.strata.core.block.BlockExtent;
import io.strata.core.block.BlockIO;
import io.strata.core.block.BlockLocation;
import io.strata.core.block.BlockReader;
import io.strata.core.block.BlockToken;
import io.strata.core.block.ReadTarget;
import io.strata.core.block.WriteTarget;
import io.strata.core.error.ErrorTranslator;
import io.strata.core.error.Op;
import io.strata.core.error.Reason;
import io.strata.core.error.StrataException;
import io.strata.core.rpc.Coalescer;
import io.strata.core.rpc.MetaCaller;
import io.strata.core.rpc.MethodKinds;
import io.strata.core.rpc.Sends;
import io.strata.core.worker.WorkerBlockIO;
import io.strata.proto.v1.AppendRequest;
import io.strata.proto.v1.AppendResponse;
import io.strata.proto.v1.BatchCall;
import io.strata.proto.v1.BatchResult;
import io.strata.proto.v1.Block;
import io.strata.proto.v1.ConcatRequest;
import io.strata.proto.v1.ObjectToken;
import io.strata.proto.v1.CreateRequest;
import io.strata.proto.v1.CreateResponse;
import io.strata.proto.v1.DeleteRequest;
import io.strata.proto.v1.FlushRequest;
import io.strata.proto.v1.FlushResponse;
import io.strata.proto.v1.GetContentSummaryRequest;
import io.strata.proto.v1.GetContentSummaryResponse;
import io.strata.proto.v1.GetFileStatusRequest;
import io.strata.proto.v1.GetServerDefaultsRequest;
import io.strata.proto.v1.GetServerDefaultsResponse;
import io.strata.proto.v1.Header;
import io.strata.proto.v1.ListNamespacesRequest;
import io.strata.proto.v1.ListNamespacesResponse;
import io.strata.proto.v1.ListWorkersRequest;
import io.strata.proto.v1.MetaServiceGrpc;
import io.strata.proto.v1.MkdirsRequest;
import io.strata.proto.v1.NamespaceInfo;
import io.strata.proto.v1.OpenRequest;
import io.strata.proto.v1.OpenResponse;
import io.strata.proto.v1.ReadTailRequest;
import io.strata.proto.v1.RecoverLeaseRequest;
import io.strata.proto.v1.RenameRequest;
import io.strata.proto.v1.RenewLeaseRequest;
import io.strata.proto.v1.SetOwnerRequest;
import io.strata.proto.v1.SetPermissionRequest;
import io.strata.proto.v1.SetTimesRequest;
import io.strata.proto.v1.TruncateRequest;
import io.strata.proto.v1.WorkerInfo;
import io.strata.proto.v1.WorkerStats;
import java.io.Closeable;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A connection to a Strata namespace service: every metadata operation of every namespace, as
 * thin calls over gRPC (the service owns all semantics), and the data path of files over the
 * inline limit through the workers ({@link WorkerBlockIO}). Safe for concurrent use; one per
 * process and user is plenty.
 *
 * <p>Every metadata call goes through one {@link MetaCaller}, which sends it to the leader of the
 * service's Raft group and retries it (to the leader, or another member) while none answers, up
 * to {@link ClientConfig#retryTimeout}; each attempt has the deadline {@link
 * ClientConfig#rpcTimeout}. Mutations carry a request id ({@link #header}) so that a retry is
 * never applied twice. The calls a Batch can carry (getFileStatus and open; mkdirs, create,
 * complete, rename and delete) go through two {@link Coalescer}s, one for reads and one for
 * mutations, so that a read never waits behind a mutation's fsync: alone while few are in
 * flight, together in Batch RPCs under load ({@link ClientConfig#batchesInFlight}, {@link
 * ClientConfig#mutationsInFlight}). On the data
 * path only reads move on to another worker when one cannot be reached. Errors come back as the
 * exceptions of {@link io.strata.core.error}, translated in one place, {@link ErrorTranslator}.
 */
public final class StrataClient implements Closeable {
  private static final System.Logger LOG = System.getLogger(StrataClient.class.getName());

  /** The namespace of an empty name (the service's "default"). */
  public static final String DEFAULT_NAMESPACE = "default";

  private final ClientConfig cfg;
  private final MetaCaller meta;
  private final Coalescer reads;
  private final Coalescer mutations;
  private final String clientName;
  private final LeaseRenewer renewer;
  private final WorkerBlockIO workers;
  private final BlockIO blockIO;
  private final ListPrefetch listPrefetch;
  private final Features features = new Features(this);
  private volatile boolean closed;
  private volatile ServerDefaults defaults;
  /** The namespaces the service described, by name: their modes never change. */
  private final Map<String, Namespace> namespaces = new ConcurrentHashMap<>();

  private StrataClient(ClientConfig cfg, MetaCaller meta) {
    this.cfg = cfg;
    this.meta = meta;
    this.clientName = newClientName();
    this.reads = new Coalescer(meta, cfg.batchesInFlight(), "strata-batch-reads-" + clientName);
    this.mutations = new Coalescer(meta, cfg.mutationsInFlight(),
        "strata-batch-mutations-" + clientName);
    this.renewer = new LeaseRenewer(this::renewLease, cfg.leaseRenewInterval(),
        "strata-lease-renewer-" + clientName);
    this.workers = new WorkerBlockIO(this::listWorkers,
        cfg.shortCircuitDir().isEmpty() ? null : java.nio.file.Path.of(cfg.shortCircuitDir()),
        cfg.shortCircuit(), cfg.shortCircuitWrites(), cfg.rpcTimeout(), cfg.tls());
    this.blockIO = cfg.blockIO().orElse(workers);
    this.listPrefetch = new ListPrefetch(cfg.listPrefetch(),
        (dir, after) -> Listing.fetch(this, dir, after, cfg.listPageSize()),
        "strata-list-prefetch-" + clientName);
  }

  /**
   * Creates a client for the service in {@code cfg}. Nothing is dialled until the first call,
   * which fails with a {@link io.strata.core.error.ServiceUnavailableException} if no member
   * answers before the retry deadline.
   */
  public static StrataClient connect(ClientConfig cfg) {
    return new StrataClient(cfg,
        new MetaCaller(cfg.members(), cfg.rpcTimeout(), cfg.retryTimeout(),
            cfg.connectTimeout(), cfg.tls(), cfg.token().map(StrataToken::text).orElse(null),
            cfg.callwire()));
  }

  /** The configuration the client was made with. */
  public ClientConfig config() {
    return cfg;
  }

  /** The user the client acts as. */
  public String user() {
    return cfg.user();
  }

  /** The client's lease holder name, unique per client. */
  public String clientName() {
    return clientName;
  }

  /** Returns the attributes of {@code p}. */
  public FileInfo getFileStatus(StrataPath p) throws IOException {
    GetFileStatusRequest req = GetFileStatusRequest.newBuilder()
        .setHeader(header(MetaServiceGrpc.getGetFileStatusMethod(), p.namespace()))
        .setPath(p.path()).build();
    return FileInfo.of(p, batch(MetaServiceGrpc.getGetFileStatusMethod(), Op.GET_FILE_STATUS, p,
        BatchCall.newBuilder().setGetFileStatus(req)).getGetFileStatus().getStatus());
  }

  /**
   * Creates directory {@code p} with mode {@code permission} (less the umask), and its missing
   * parents if {@code createParents}. Returns false when the directory existed already.
   */
  public boolean mkdirs(StrataPath p, int permission, boolean createParents) throws IOException {
    checkNewNames(Op.MKDIRS, p);
    MkdirsRequest req = MkdirsRequest.newBuilder()
        .setHeader(header(MetaServiceGrpc.getMkdirsMethod(), p.namespace()))
        .setPath(p.path()).setPermission(permission).setUmask(cfg.umask())
        .setCreateParents(createParents).build();
    return batch(MetaServiceGrpc.getMkdirsMethod(), Op.MKDIRS, p,
        BatchCall.newBuilder().setMkdirs(req)).getMkdirs().getCreated();
  }

  /**
   * Creates file {@code p} and takes its lease; the returned stream commits the content on
   * close.
   */
  public FileWriter create(StrataPath p, CreateOptions o) throws IOException {
    checkNewNames(Op.CREATE, p);
    CreateRequest req = createRequest(p, o).build();
    CreateResponse r = batch(MetaServiceGrpc.getCreateMethod(), Op.CREATE, p,
        BatchCall.newBuilder().setCreate(req)).getCreate();
    WriteTarget t = new WriteTarget(p, r.getStoreUri(), r.getStatus().getInodeId(),
        r.getStatus().getBlockSize(), r.getInlineLimit(), r.getObjectKey(),
        writerToken(p, r.getStatus().getInodeId(), r.getObjectKey(), r.getBlockToken(),
            r.getBlockTokenExpires()));
    renewer.acquire();
    return new FileWriter(this, t, blockIO);
  }

  /**
   * Creates file {@code p} when the returned stream first needs it ({@link DeferredWriter}): a
   * file closed with no more than the inline limit written, never flushed, is created closed,
   * with its content, in one call at close, instead of a Create now and a Complete then. Until
   * the create is sent the file is not there for others to see, and the failures it would meet
   * (permissions, a parent that is a file) come at close. What is at {@code p} is read first (a
   * read costs the service no Raft entry): a directory, or a file under an {@code
   * overwrite=false} create, sends the create now, which fails as {@link #create} would.
   *
   * <p>As {@link #create} (the create sent now) for a createNonRecursive ({@code
   * createParents} false: the missing parent must fail here), and in a cache-mode namespace.
   */
  public FileOutput createDeferred(StrataPath p, CreateOptions o) throws IOException {
    checkNewNames(Op.CREATE, p);
    if (!o.createParents() || namespace(p.namespace()).cacheMode()) {
      return create(p, o);
    }
    FileInfo there;
    try {
      there = getFileStatus(p);
    } catch (io.strata.core.error.StrataFileNotFoundException e) {
      there = null;
    } catch (IOException e) {
      return create(p, o); // which words the failure as it would alone
    }
    if (there != null && (there.directory() || !o.overwrite())) {
      return create(p, o);
    }
    return new DeferredWriter(this, p, o, serverDefaults().inlineLimit());
  }

  /**
   * Creates file {@code p} closed, holding the first {@code len} bytes of {@code data} (at most
   * the inline limit): one call, no lease, no Complete.
   */
  void createClosed(StrataPath p, CreateOptions o, byte[] data, int len) throws IOException {
    CreateRequest req = createRequest(p, o).setComplete(true)
        .setInlineData(com.google.protobuf.ByteString.copyFrom(data, 0, len)).build();
    batch(MetaServiceGrpc.getCreateMethod(), Op.CREATE, p, BatchCall.newBuilder().setCreate(req));
  }

  private CreateRequest.Builder createRequest(StrataPath p, CreateOptions o) {
    return CreateRequest.newBuilder()
        .setHeader(header(MetaServiceGrpc.getCreateMethod(), p.namespace()))
        .setPath(p.path()).setPermission(o.permission()).setUmask(cfg.umask())
        .setOverwrite(o.overwrite()).setCreateParents(o.createParents())
        .setReplication(o.replication()).setBlockSize(o.blockSize());
  }

  /**
   * Reopens closed file {@code p} for writing at its end and takes its lease; what the returned
   * stream writes goes after what the file holds, visible on close (or flush). A cache-mode file
   * cannot be appended to (UNSUPPORTED).
   */
  public FileWriter append(StrataPath p) throws IOException {
    AppendRequest req = AppendRequest.newBuilder()
        .setHeader(header(MetaServiceGrpc.getAppendMethod(), p.namespace()))
        .setPath(p.path()).build();
    AppendResponse r =
        call(Op.APPEND, p, u -> u.call(MetaServiceGrpc.getAppendMethod(), req));
    WriteTarget t = new WriteTarget(p, r.getStoreUri(), r.getStatus().getInodeId(),
        r.getStatus().getBlockSize(), r.getInlineLimit(), "",
        writerToken(p, r.getStatus().getInodeId(), "", r.getBlockToken(),
            r.getBlockTokenExpires()));
    renewer.acquire();
    return FileWriter.appending(this, t, blockIO, r.getStatus().getLength(),
        r.getInlineData().toByteArray());
  }

  /**
   * Cuts closed file {@code p} to {@code length} bytes, no more than it holds (INVALID_ARGUMENT
   * otherwise); at once, whole blocks past the cut going to the service's garbage queue.
   */
  public void truncate(StrataPath p, long length) throws IOException {
    TruncateRequest req = TruncateRequest.newBuilder()
        .setHeader(header(MetaServiceGrpc.getTruncateMethod(), p.namespace()))
        .setPath(p.path()).setLength(length).build();
    call(Op.TRUNCATE, p, u -> u.call(MetaServiceGrpc.getTruncateMethod(), req));
  }

  /**
   * Opens file {@code p} for reading. A file being written reads up to its visible length: its
   * blocks, then the bytes its writer flushed after them, from the service ({@link TailReader}).
   * In a cache-mode namespace the reader opens the file again, checked against the bucket, if
   * its object changed before any byte was read ({@link FileReader}).
   */
  public FileReader open(StrataPath p) throws IOException {
    return new FileReader(openContent(p, false), () -> openContent(p, true));
  }

  /** Opens {@code p}, checked against the bucket first if {@code refresh} (cache mode). */
  private FileReader.Content openContent(StrataPath p, boolean refresh) throws IOException {
    return contentOf(p, openCall(p, refresh));
  }

  /** What Open answered {@code r} for {@code p} gives to read. */
  private FileReader.Content contentOf(StrataPath p, OpenResponse r) throws IOException {
    FileInfo info = FileInfo.of(p, r.getStatus());
    long blocksEnd = blocksEnd(r);
    boolean tail = !r.getInline() && r.getObjectKey().isEmpty() && info.length() > blocksEnd;
    if (r.getBlocksCount() == 0 && !tail) {
      return new FileReader.Content(info, r.getInlineData().toByteArray(), null, false);
    }
    BlockReader br = r.getBlocksCount() == 0 ? null
        : blockIO.openReader(readTarget(p, info, r));
    return new FileReader.Content(info, null,
        tail ? new TailReader(this, info, new TailReader.View(br, blocksEnd)) : br,
        !r.getObjectKey().isEmpty());
  }

  /**
   * The blocks of file {@code f} as the service holds them now, for a reader of it being written
   * whose tail a block took over since it opened it ({@link TailReader}). The file must still be
   * the same inode.
   */
  TailReader.View blocksOf(FileInfo f) throws IOException {
    OpenResponse r = openCall(f.path(), false);
    FileInfo now = FileInfo.of(f.path(), r.getStatus());
    if (now.inodeId() != f.inodeId()) {
      throw ErrorTranslator.forReason(Reason.NOT_FOUND, Op.READ, f.path().toString(), "read "
          + f.path() + ": the file was replaced since it was opened: open it again", null);
    }
    BlockReader br = r.getBlocksCount() == 0 ? null : blockIO.openReader(readTarget(f.path(),
        now, r));
    return new TailReader.View(br, blocksEnd(r));
  }

  /** Where the blocks of {@code r} end. */
  private static long blocksEnd(OpenResponse r) {
    int n = r.getBlocksCount();
    return n == 0 ? 0 : r.getBlocks(n - 1).getOffset() + r.getBlocks(n - 1).getLength();
  }

  /**
   * The block token of a writer of file {@code p} (inode {@code inode}), as the service answered
   * it. A block-mode writer opens a stream to a worker for each block with it, and the worker
   * refuses an expired one: the token renews itself in the minute before it expires with a flush
   * that carries nothing (the service checks the writer's lease, commits nothing new, and answers
   * with a token), so that a file written for longer than a token lives without a flush goes on
   * block after block. A cache-mode file's one stream is checked as it opens: its token is not
   * renewed (a flush is refused there).
   */
  private BlockToken writerToken(StrataPath p, long inode, String objectKey, ByteString token,
      long expires) {
    if (!objectKey.isEmpty()) {
      return new BlockToken(token, expires, null);
    }
    return new BlockToken(token, expires, () -> {
      FlushRequest req = FlushRequest.newBuilder()
          .setHeader(header(MetaServiceGrpc.getFlushMethod(), p.namespace()))
          .setPath(p.path()).setInodeId(inode).build();
      FlushResponse r = flushCall(p, req);
      return new BlockToken(r.getBlockToken(), r.getBlockTokenExpires(), null);
    });
  }

  /**
   * Commits a writer's flush ({@link FileWriter#hflush}); returns the file's visible length, and
   * renews {@code token} with the answer's.
   */
  long flush(StrataPath p, FlushRequest req, BlockToken token) throws IOException {
    FlushResponse r = flushCall(p, req);
    token.set(r.getBlockToken(), r.getBlockTokenExpires());
    return r.getLength();
  }

  /**
   * Sends {@code req}, a Flush, alone (not in a Batch): marked {@code first_attempt} on its
   * first send, as a batched mutation's is ({@link Sends}).
   */
  private FlushResponse flushCall(StrataPath p, FlushRequest req) throws IOException {
    FlushRequest first = req.toBuilder()
        .setHeader(req.getHeader().toBuilder().setFirstAttempt(true)).build();
    return call(Op.FLUSH, p, new Sends<>(first, req,
        (u, q) -> u.call(MetaServiceGrpc.getFlushMethod(), q)));
  }

  /**
   * Reads up to {@code length} bytes at {@code offset} of the flushed tail of file {@code f}
   * (the inode it was opened as); fewer, or none, past its visible length now.
   */
  byte[] readTail(FileInfo f, long offset, int length) throws IOException {
    ReadTailRequest req = ReadTailRequest.newBuilder()
        .setHeader(header(MetaServiceGrpc.getReadTailMethod(), f.path().namespace()))
        .setPath(f.path().path()).setInodeId(f.inodeId()).setOffset(offset).setLength(length)
        .build();
    return call(Op.READ_TAIL, f.path(), u -> u.call(MetaServiceGrpc.getReadTailMethod(), req))
        .getData().toByteArray();
  }

  /**
   * Returns the checksum of the first {@code length} bytes of file {@code p}, all of it when
   * {@code length} is at least its length (docs/semantics.md, "Checksums"). The CRCs of its
   * whole blocks come from the workers, which combine the CRCs their caches keep of the blocks'
   * chunks ({@link BlockIO#blockCrcs}), and are combined here: no byte of a cached file is read.
   * The bytes of a small file's inline content, of a block the length cuts and of a flushed
   * tail are read and checksummed here.
   */
  public FileChecksum checksum(StrataPath p, long length) throws IOException {
    OpenResponse r = openCall(p, false);
    FileInfo info = FileInfo.of(p, r.getStatus());
    long want = Math.min(Math.max(0, length), info.length());
    List<BlockExtent> whole = new ArrayList<>();
    for (Block b : r.getBlocksList()) {
      if (b.getOffset() + b.getLength() > want) {
        break;
      }
      whole.add(new BlockExtent(b.getBlockId(), b.getOffset(), b.getLength(), b.getObjectInode()));
    }
    int crc = 0;
    long done = 0;
    if (!whole.isEmpty()) {
      ReadTarget t = readTarget(p, info, r);
      int[] crcs = blockIO.blockCrcs(new ReadTarget(t.path(), t.storeUri(), t.inodeId(),
          t.length(), whole, t.objectKey(), t.objectVersion(), t.token(), t.objectTokens()));
      for (int i = 0; i < crcs.length; i++) {
        crc = FileChecksum.combine(crc, crcs[i], whole.get(i).length());
      }
      BlockExtent last = whole.get(whole.size() - 1);
      done = last.offset() + last.length();
    }
    if (done < want) {
      java.util.zip.CRC32C rest = new java.util.zip.CRC32C();
      byte[] buf = new byte[(int) Math.min(1 << 20, want - done)];
      try (FileReader fr = new FileReader(contentOf(p, r), () -> contentOf(p, openCall(p, true)))) {
        for (long pos = done; pos < want; ) {
          int n = fr.read(pos, buf, 0, (int) Math.min(buf.length, want - pos));
          if (n < 0) {
            throw new java.io.EOFException("checksum " + p + ": the file ends at " + pos
                + ", before " + want);
          }
          rest.update(buf, 0, n);
          pos += n;
        }
      }
      crc = FileChecksum.combine(crc, (int) rest.getValue(), want - done);
    }
    return new FileChecksum(crc, want);
  }

  /**
   * Returns where each block of file {@code p} is best read (its home worker), in file order.
   * Empty for a file without blocks (empty, or small enough to be stored inline).
   */
  public List<BlockLocation> blockLocations(StrataPath p) throws IOException {
    OpenResponse r = openCall(p, false);
    if (r.getBlocksCount() == 0) {
      return List.of();
    }
    return blockIO.locate(readTarget(p, FileInfo.of(p, r.getStatus()), r));
  }

  /** Returns the counters of every live worker (as {@code strata admin workers} shows them). */
  public List<WorkerStats> workerStats() throws IOException {
    checkOpen(Op.ADMIN, StrataPath.root(""));
    return workers.stats();
  }

  private OpenResponse openCall(StrataPath p, boolean refresh) throws IOException {
    OpenRequest req = OpenRequest.newBuilder()
        .setHeader(header(MetaServiceGrpc.getOpenMethod(), p.namespace()))
        .setPath(p.path()).setRefresh(refresh).build();
    return batch(MetaServiceGrpc.getOpenMethod(), Op.OPEN, p, BatchCall.newBuilder().setOpen(req))
        .getOpen();
  }

  private ReadTarget readTarget(StrataPath p, FileInfo info, OpenResponse r) {
    List<BlockExtent> blocks = new ArrayList<>(r.getBlocksCount());
    for (Block b : r.getBlocksList()) {
      blocks.add(new BlockExtent(b.getBlockId(), b.getOffset(), b.getLength(),
          b.getObjectInode()));
    }
    // The blocks end before the length of a file being written: its tail is not theirs to read.
    long inode = info.inodeId();
    BlockToken token = new BlockToken(r.getBlockToken(), r.getBlockTokenExpires(), () -> {
      OpenResponse again = openCall(p, false);
      return again.getStatus().getInodeId() != inode ? null
          : new BlockToken(again.getBlockToken(), again.getBlockTokenExpires(), null);
    });
    return new ReadTarget(p, r.getStoreUri(), inode, Math.min(info.length(),
        blocksEnd(r)), blocks, r.getObjectKey(), r.getObjectVersion(), token,
        objectTokens(p, inode, r));
  }

  /**
   * The tokens of the inodes whose prefixes hold objects of file {@code p}'s blocks (blocks a
   * concat moved), each renewed as the file's is: by opening the file again.
   */
  private java.util.Map<Long, BlockToken> objectTokens(StrataPath p, long inode,
      OpenResponse r) {
    java.util.Map<Long, BlockToken> out = new java.util.HashMap<>();
    for (ObjectToken o : r.getObjectTokensList()) {
      long ino = o.getInodeId();
      out.put(ino, new BlockToken(o.getToken(), r.getBlockTokenExpires(), () -> {
        OpenResponse again = openCall(p, false);
        if (again.getStatus().getInodeId() != inode) {
          return null;
        }
        for (ObjectToken t : again.getObjectTokensList()) {
          if (t.getInodeId() == ino) {
            return new BlockToken(t.getToken(), again.getBlockTokenExpires(), null);
          }
        }
        return null;
      }));
    }
    return out;
  }

  /**
   * Appends the closed files {@code srcs}, in order, to the closed file {@code target} and
   * removes them, as HDFS's concat: the service moves their blocks to the target, no byte is
   * copied (docs/semantics.md, "Concat"). All are in one block-mode namespace.
   */
  public void concat(StrataPath target, List<StrataPath> srcs) throws IOException {
    ConcatRequest.Builder req = ConcatRequest.newBuilder()
        .setHeader(header(MetaServiceGrpc.getConcatMethod(), target.namespace()))
        .setTarget(target.path());
    for (StrataPath s : srcs) {
      if (!s.namespace().equals(target.namespace())) {
        throw ErrorTranslator.forReason(Reason.INVALID_ARGUMENT, Op.CONCAT, target.toString(),
            "concat " + target + ": source " + s + " is in another namespace", null);
      }
      req.addSrcs(s.path());
    }
    ConcatRequest built = req.build();
    call(Op.CONCAT, target, u -> u.call(MetaServiceGrpc.getConcatMethod(), built));
  }

  private List<WorkerInfo> listWorkers() throws IOException {
    StrataPath root = StrataPath.root("");
    return call(Op.LIST_WORKERS, root, u -> u.call(MetaServiceGrpc.getListWorkersMethod(),
            ListWorkersRequest.getDefaultInstance()))
        .getWorkersList();
  }

  /**
   * Lists directory {@code p} (a file lists as itself), page by page. The first page is fetched
   * now, so a missing path fails here.
   */
  public IOIterator<FileInfo> list(StrataPath p) throws IOException {
    return new Listing(this, p, cfg.listPageSize(), listPrefetch);
  }

  /**
   * Renames {@code src} to {@code dst} in one namespace and returns the path src now has.
   * Without {@code noDescend}, an existing directory {@code dst} receives src as a child (the
   * FileSystem.rename rule); with it, dst is the exact new name and {@code overwrite} allows
   * replacing a file or an empty directory there (rename2).
   */
  public StrataPath rename(StrataPath src, StrataPath dst, boolean overwrite, boolean noDescend)
      throws IOException {
    if (!src.namespace().equals(dst.namespace())) {
      throw new IOException("rename " + src + " to " + dst + ": not in the same namespace");
    }
    checkNewNames(Op.RENAME, dst);
    RenameRequest req = RenameRequest.newBuilder()
        .setHeader(header(MetaServiceGrpc.getRenameMethod(), src.namespace()))
        .setSrc(src.path()).setDst(dst.path()).setOverwrite(overwrite).setNoDescend(noDescend)
        .build();
    String fin = batch(MetaServiceGrpc.getRenameMethod(), Op.RENAME, src,
        BatchCall.newBuilder().setRename(req)).getRename().getFinalPath();
    return fin.isEmpty() ? dst : new StrataPath(src.namespace(), fin);
  }

  /**
   * Deletes {@code p} (a non-empty directory only if {@code recursive}); returns false when
   * nothing was there.
   */
  public boolean delete(StrataPath p, boolean recursive) throws IOException {
    DeleteRequest req = DeleteRequest.newBuilder()
        .setHeader(header(MetaServiceGrpc.getDeleteMethod(), p.namespace()))
        .setPath(p.path()).setRecursive(recursive).build();
    return batch(MetaServiceGrpc.getDeleteMethod(), Op.DELETE, p,
        BatchCall.newBuilder().setDelete(req)).getDelete().getDeleted();
  }

  /** Sets the mode bits of {@code p}. */
  public void setPermission(StrataPath p, int permission) throws IOException {
    SetPermissionRequest req = SetPermissionRequest.newBuilder()
        .setHeader(header(MetaServiceGrpc.getSetPermissionMethod(), p.namespace()))
        .setPath(p.path()).setPermission(permission).build();
    call(Op.SET_PERMISSION, p, u -> u.call(MetaServiceGrpc.getSetPermissionMethod(), req));
  }

  /** Sets the owner and group of {@code p}; null or empty leaves one as it is. */
  public void setOwner(StrataPath p, String owner, String group) throws IOException {
    SetOwnerRequest req = SetOwnerRequest.newBuilder()
        .setHeader(header(MetaServiceGrpc.getSetOwnerMethod(), p.namespace()))
        .setPath(p.path()).setOwner(owner == null ? "" : owner)
        .setGroup(group == null ? "" : group).build();
    call(Op.SET_OWNER, p, u -> u.call(MetaServiceGrpc.getSetOwnerMethod(), req));
  }

  /** Sets the times of {@code p}, in ms since the epoch; -1 leaves one as it is. */
  public void setTimes(StrataPath p, long mtime, long atime) throws IOException {
    SetTimesRequest req = SetTimesRequest.newBuilder()
        .setHeader(header(MetaServiceGrpc.getSetTimesMethod(), p.namespace()))
        .setPath(p.path()).setModificationTime(mtime).setAccessTime(atime).build();
    call(Op.SET_TIMES, p, u -> u.call(MetaServiceGrpc.getSetTimesMethod(), req));
  }

  /**
   * Returns what the service gives a file whose creator leaves a setting unset (asked once per
   * client: the service's settings change only when it restarts).
   */
  public ServerDefaults serverDefaults() throws IOException {
    ServerDefaults d = defaults;
    if (d == null) {
      StrataPath root = StrataPath.root("");
      GetServerDefaultsRequest req = GetServerDefaultsRequest.newBuilder()
          .setHeader(header(MetaServiceGrpc.getGetServerDefaultsMethod(), "")).build();
      GetServerDefaultsResponse r = call(Op.SERVER_DEFAULTS, root,
          u -> u.call(MetaServiceGrpc.getGetServerDefaultsMethod(), req));
      d = new ServerDefaults(r.getBlockSize(), r.getReplication(), r.getInlineLimit(),
          r.getTrashIntervalMs());
      defaults = d;
    }
    return d;
  }

  /**
   * Returns the aggregates of the subtree at {@code p}, kept exact by the service; in a cache-mode
   * namespace, of what the service has loaded from the bucket ({@link
   * ContentSummary#loadedOnly}).
   */
  public ContentSummary getContentSummary(StrataPath p) throws IOException {
    GetContentSummaryRequest req = GetContentSummaryRequest.newBuilder()
        .setHeader(header(MetaServiceGrpc.getGetContentSummaryMethod(), p.namespace())).setPath(p.path()).build();
    GetContentSummaryResponse r = call(Op.CONTENT_SUMMARY, p,
        u -> u.call(MetaServiceGrpc.getGetContentSummaryMethod(), req));
    long names = r.hasQuota() ? r.getQuota().getNames() : -1;
    long space = r.hasQuota() ? r.getQuota().getSpace() : -1;
    return new ContentSummary(r.getLength(), r.getFileCount(), r.getDirectoryCount(),
        r.getSpaceConsumed(), r.getLoadedOnly(), names, space);
  }

  /**
   * The quotas, ACLs, extended attributes and storage policies of this client's namespaces
   * (HDFS's, docs/semantics.md).
   */
  public Features features() {
    return features;
  }

  /** Closes file {@code p} that its writer left open; reports whether it is closed now. */
  public boolean recoverLease(StrataPath p) throws IOException {
    RecoverLeaseRequest req = RecoverLeaseRequest.newBuilder()
        .setHeader(header(MetaServiceGrpc.getRecoverLeaseMethod(), p.namespace()))
        .setPath(p.path()).build();
    return call(Op.RECOVER_LEASE, p, u -> u.call(MetaServiceGrpc.getRecoverLeaseMethod(), req))
        .getClosed();
  }

  /**
   * Returns what namespace {@code ns} ("" for "default") is: its mode and, in cache mode, its
   * sync interval. Asked of the service once per namespace and client (a namespace keeps its
   * mode for its life); throws a {@link io.strata.core.error.StrataFileNotFoundException}
   * (NO_NAMESPACE) if the service has no such namespace.
   */
  public Namespace namespace(String ns) throws IOException {
    return namespace(ns, null);
  }

  /**
   * Checks that namespace {@code ns} exists, waiting at most {@code timeout}: throws a {@link
   * io.strata.core.error.StrataFileNotFoundException} (NO_NAMESPACE) if the service says it does
   * not; returns what it is if it exists, and empty if the service could not say (unreachable).
   */
  public Optional<Namespace> probeNamespace(String ns, java.time.Duration timeout)
      throws IOException {
    try {
      return Optional.of(namespace(ns, timeout));
    } catch (io.strata.core.error.StrataFileNotFoundException e) {
      throw e;
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  /** {@link #namespace(String)}, each attempt bounded by {@code timeout} if it is not null. */
  private Namespace namespace(String ns, java.time.Duration timeout) throws IOException {
    String name = ns.isEmpty() ? DEFAULT_NAMESPACE : ns;
    Namespace known = namespaces.get(name);
    if (known != null) {
      return known;
    }
    StrataPath root = StrataPath.root(ns);
    ListNamespacesRequest req = ListNamespacesRequest.newBuilder()
        .setHeader(header(MetaServiceGrpc.getListNamespacesMethod(), "")).build();
    MetaCaller.Call<ListNamespacesResponse> c =
        u -> u.call(MetaServiceGrpc.getListNamespacesMethod(), req);
    ListNamespacesResponse r = timeout == null ? call(Op.LIST_NAMESPACES, root, c)
        : call(Op.LIST_NAMESPACES, root, timeout, c);
    for (NamespaceInfo info : r.getNamespacesList()) {
      if (info.getName().equals(name)) {
        Namespace n = Namespace.of(info);
        namespaces.put(name, n);
        return n;
      }
    }
    throw ErrorTranslator.forReason(Reason.NO_NAMESPACE, Op.LIST_NAMESPACES, root.toString(),
        root + ": no such namespace", null);
  }

  /**
   * Waits until {@code n} calls of reads (or of mutations, {@code reads} false) wait for a place
   * in flight; fails after {@code bound}. For tests (ScriptTest).
   */
  void awaitQueued(boolean reads, int n, java.time.Duration bound) throws InterruptedException {
    (reads ? this.reads : mutations).awaitQueued(n, bound);
  }

  /** Number of Batch RPCs this client sent, of reads and of mutations (for tests and metrics). */
  public long batchesSent() {
    return reads.batchesSent() + mutations.batchesSent();
  }

  /** Number of lease renewals this client made (for tests and metrics). */
  public long leaseRenewals() {
    return renewer.renewals();
  }

  /** Whether the lease renewer is running, that is, files are open for writing. */
  public boolean renewingLeases() {
    return renewer.running();
  }

  /**
   * Stops lease renewal and closes the connection. Files still open for writing are left to
   * lease recovery.
   */
  @Override
  public void close() throws IOException {
    if (closed) {
      return;
    }
    closed = true;
    renewer.close();
    listPrefetch.close();
    reads.close();
    mutations.close();
    workers.close();
    meta.close();
  }

  /** Runs {@code c} on the service's leader ({@link MetaCaller}), translating its failure. */
  /**
   * Renews token {@code token} (its own user's, or any as a superuser) and returns its new
   * expiry, milliseconds since the epoch.
   */
  public long renewToken(String token) throws IOException {
    io.strata.proto.v1.RenewTokenRequest req = io.strata.proto.v1.RenewTokenRequest.newBuilder()
        .setHeader(header(MetaServiceGrpc.getRenewTokenMethod(), "")).setToken(token).build();
    return call(Op.ADMIN, StrataPath.root(""),
        u -> u.call(MetaServiceGrpc.getRenewTokenMethod(), req)).getExpires();
  }

  /** Revokes token {@code token}: the service refuses it from then on. */
  public void revokeToken(String token) throws IOException {
    io.strata.proto.v1.RevokeTokenRequest req = io.strata.proto.v1.RevokeTokenRequest.newBuilder()
        .setHeader(header(MetaServiceGrpc.getRevokeTokenMethod(), "")).setToken(token).build();
    call(Op.ADMIN, StrataPath.root(""),
        u -> u.call(MetaServiceGrpc.getRevokeTokenMethod(), req));
  }

  <T> T call(Op op, StrataPath p, MetaCaller.Call<T> c) throws IOException {
    checkOpen(op, p);
    try {
      return meta.call(op, p.toString(), c);
    } finally {
      changed(op);
    }
  }

  /**
   * Makes {@code c}, a call of {@code method}, through the coalescer of its kind (reads and
   * mutations each have theirs, {@link MethodKinds}); returns its result.
   */
  BatchResult batch(MethodDescriptor<?, ?> method, Op op, StrataPath p, BatchCall.Builder c)
      throws IOException {
    checkOpen(op, p);
    Coalescer co = MethodKinds.isMutation(method) ? mutations : reads;
    try {
      return co.call(op, p.toString(), c.build());
    } finally {
      changed(op);
    }
  }

  private <T> T call(Op op, StrataPath p, java.time.Duration bound, MetaCaller.Call<T> c)
      throws IOException {
    checkOpen(op, p);
    try {
      return meta.call(op, p.toString(), bound, c);
    } finally {
      changed(op);
    }
  }

  /**
   * Refuses, before it leaves, a call that would create entries with names the service refuses
   * (':' or a control character), with the exception the service's answer would have become.
   */
  private static void checkNewNames(Op op, StrataPath p) throws IOException {
    String problem = p.newNameProblem().orElse(null);
    if (problem != null) {
      String verb = op.name().toLowerCase(java.util.Locale.ROOT);
      throw new StrataException(Reason.INVALID_PATH, op, p.toString(),
          verb + " " + p.path() + ": " + PathRule.PREFIX + problem, null);
    }
  }

  /**
   * Drops the listings' prefetched pages when a call of {@code op} may change the namespace: as
   * it leaves and when it is answered ({@link ListPrefetch}).
   */
  private void changed(Op op) {
    if (!ListPrefetch.isRead(op)) {
      listPrefetch.invalidate();
    }
  }

  private void checkOpen(Op op, StrataPath p) throws IOException {
    if (closed) {
      throw MetaCaller.closed(op, p.toString());
    }
    changed(op);
  }

  /**
   * Removes the file a failed writer created, only if {@code t.path()} still names the writer's
   * inode (a conditional delete); what the worker uploaded is collected once the deletion
   * commits. Best effort: a failure is logged, and lease recovery then closes the file empty.
   */
  void abandon(WriteTarget t) {
    DeleteRequest req = DeleteRequest.newBuilder()
        .setHeader(header(MetaServiceGrpc.getDeleteMethod(), t.path().namespace()))
        .setPath(t.path().path()).setInodeId(t.inodeId()).build();
    try {
      batch(MetaServiceGrpc.getDeleteMethod(), Op.DELETE, t.path(),
          BatchCall.newBuilder().setDelete(req));
    } catch (IOException e) {
      LOG.log(Level.WARNING, "strata: could not remove " + t.path() + " after its write failed "
          + "(lease recovery will close it empty): " + e.getMessage());
    }
  }

  /**
   * The request header of a call of {@code method} in namespace {@code ns}. A mutation's has a
   * new request id ({@link MethodKinds}): build the request once and let {@link MetaCaller}
   * resend that same request, so that the service applies it once however often it is sent.
   */
  Header header(MethodDescriptor<?, ?> method, String ns) {
    Header.Builder h = headerBuilder(ns);
    if (MethodKinds.isMutation(method)) {
      h.setRequestId(MetaCaller.newRequestId());
    }
    return h.build();
  }

  private Header.Builder headerBuilder(String ns) {
    return Header.newBuilder().setNamespace(ns).setUser(cfg.user())
        .addAllGroups(cfg.groups()).setClientName(clientName);
  }

  /** Called by a writer at close. */
  void releaseWriter() {
    renewer.release();
  }

  /** NB: no request id: the leader keeps leases in memory, and renewing twice is harmless. */
  private void renewLease() throws IOException {
    RenewLeaseRequest req = RenewLeaseRequest.newBuilder()
        .setHeader(header(MetaServiceGrpc.getRenewLeaseMethod(), "")).build();
    call(Op.RENEW_LEASE, StrataPath.root(""),
        u -> u.call(MetaServiceGrpc.getRenewLeaseMethod(), req));
  }

  private static String newClientName() {
    byte[] b = new byte[6];
    new SecureRandom().nextBytes(b);
    String host;
    try {
      host = InetAddress.getLocalHost().getHostName();
    } catch (UnknownHostException e) {
      host = "localhost";
    }
    return "strata-java-" + host + "-" + ProcessHandle.current().pid() + "-"
        + HexFormat.of().formatHex(b);
  }
}
