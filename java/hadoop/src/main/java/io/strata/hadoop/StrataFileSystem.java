package io.strata.hadoop;

import static org.apache.hadoop.fs.impl.PathCapabilitiesSupport.validatePathCapabilityArgs;

import io.strata.core.CreateOptions;
import io.strata.core.Features.AclChange;
import io.strata.core.FileInfo;
import io.strata.core.FileWriter;
import io.strata.core.IOIterator;
import io.strata.core.Namespace;
import io.strata.core.PathRule;
import io.strata.core.ServerDefaults;
import io.strata.core.StrataClient;
import io.strata.core.StrataPath;
import io.strata.core.error.Reason;
import io.strata.core.error.StrataError;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.hadoop.HadoopIllegalArgumentException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.BlockLocation;
import org.apache.hadoop.fs.BlockStoragePolicySpi;
import org.apache.hadoop.fs.ContentSummary;
import org.apache.hadoop.fs.CreateFlag;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.FsServerDefaults;
import org.apache.hadoop.fs.InvalidPathException;
import org.apache.hadoop.fs.LeaseRecoverable;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.Options;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.PathIsNotEmptyDirectoryException;
import org.apache.hadoop.fs.QuotaUsage;
import org.apache.hadoop.fs.RemoteIterator;
import org.apache.hadoop.fs.StorageStatistics;
import org.apache.hadoop.fs.XAttrSetFlag;
import org.apache.hadoop.fs.impl.AbstractFSBuilderImpl;
import org.apache.hadoop.fs.impl.OpenFileParameters;
import org.apache.hadoop.fs.permission.AclEntry;
import org.apache.hadoop.fs.permission.AclStatus;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.util.DataChecksum;
import org.apache.hadoop.util.LambdaUtils;
import org.apache.hadoop.util.Progressable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Hadoop FileSystem of {@code strata://<namespace>/<path>} ({@code strata:///path}: the
 * default namespace). A thin adapter over {@link StrataClient}: it converts paths and statuses,
 * maps errors once ({@link HadoopErrors}), follows HDFS where HDFS returns false instead of
 * throwing (rename, delete), and counts statistics. Configuration: {@link StrataConfigKeys} and
 * docs/java.md.
 *
 * <p>Files over the inline limit (4 KiB) go through the workers (core's data path);
 * {@link #getFileBlockLocations} names each block's home worker. A file being written is read up
 * to what its writer flushed (hflush/hsync), as in HDFS; append and truncate are the service's.
 * Not supported yet, and declared so: concat, symlinks, snapshots, ACLs, extended attributes.
 */
public class StrataFileSystem extends FileSystem implements LeaseRecoverable {
  /** The URI scheme. */
  public static final String SCHEME = StrataPath.SCHEME;

  private static final Logger LOG = LoggerFactory.getLogger(StrataFileSystem.class);

  /** Bound on the namespace check at initialize. */
  private static final java.time.Duration NAMESPACE_PROBE_TIMEOUT = java.time.Duration.ofSeconds(5);

  private URI uri;
  private String namespace;
  private StrataClient client;
  private HadoopFeatures features;
  private Path workingDir;
  private int readBuffer;
  private boolean deferCreates;
  /** What the namespace is (its mode), once the service said; null until then. */
  private volatile Namespace namespaceInfo;
  /** A cache-mode getContentSummary warned that its counts are of what is loaded. */
  private final AtomicBoolean warnedLoadedOnly = new AtomicBoolean();

  @Override
  public void initialize(URI name, Configuration conf) throws IOException {
    super.initialize(name, conf);
    setConf(conf);
    namespace = name.getAuthority() == null ? "" : name.getAuthority();
    // As HDFS and file: scheme://authority for a namespace, scheme:/// for the default one.
    uri = URI.create(SCHEME + "://" + (namespace.isEmpty() ? "/" : namespace));
    client = StrataClient.connect(ClientSettings.of(conf, name));
    features = new HadoopFeatures(client.features());
    long rb = conf.getLongBytes(StrataConfigKeys.READ_BUFFER,
        StrataConfigKeys.DEFAULT_READ_BUFFER);
    if (rb < 0 || rb > Integer.MAX_VALUE - 8) {
      client.close();
      throw new IOException("cannot open " + name + ": " + StrataConfigKeys.READ_BUFFER
          + " must be 0 to 2 GiB: " + rb);
    }
    readBuffer = (int) rb;
    deferCreates = conf.getBoolean(StrataConfigKeys.CREATE_DEFERRED, false);
    workingDir = getHomeDirectory();
    checkNamespace();
  }

  /**
   * Fails initialization for a namespace the service says does not exist, and learns its mode.
   * NB: without this, a misspelt namespace surfaces as "No such file or directory" wherever Hadoop
   * turns a FileNotFoundException into "no match" (globbing, FsShell). Any other failure of the
   * probe is left for the first real operation to report (the mode is then asked for when it is
   * needed).
   */
  private void checkNamespace() throws IOException {
    try {
      namespaceInfo = client.probeNamespace(namespace, NAMESPACE_PROBE_TIMEOUT).orElse(null);
    } catch (FileNotFoundException e) {
      FileNotFoundException fnf = new FileNotFoundException(uri + ": no such namespace");
      fnf.initCause(e);
      client.close();
      throw fnf;
    }
  }

  @Override
  public String getScheme() {
    return SCHEME;
  }

  @Override
  public URI getUri() {
    return uri;
  }

  /**
   * {@code strata:} and the service's address as configured: the service of the token {@link
   * #getDelegationToken} returns, under which a job's credentials carry it.
   */
  @Override
  public String getCanonicalServiceName() {
    return StrataTokens.serviceName(getConf().getTrimmed(StrataConfigKeys.META_ADDRESS, ""));
  }

  /**
   * The client's own token as a Hadoop token of kind {@link StrataTokenIdentifier#KIND}, so
   * that a job (MapReduce's TokenCache, Spark's delegation token providers) adds it to its
   * credentials and its tasks act as the same user; null when the client has none (a service
   * with authentication off). NB: unlike HDFS it issues no new token: a client cannot mint one
   * for itself; the renewer, if any, renews this one ({@link StrataTokenRenewer}).
   */
  @Override
  public org.apache.hadoop.security.token.Token<StrataTokenIdentifier> getDelegationToken(
      String renewer) {
    return client.config().token()
        .map(t -> StrataTokens.toHadoop(t, getCanonicalServiceName())).orElse(null);
  }

  /** {@code /user/<user>}, where user is the one the client acts as. */
  @Override
  public Path getHomeDirectory() {
    return makeQualified(new Path("/user/" + client.user()));
  }

  @Override
  public Path getWorkingDirectory() {
    return workingDir;
  }

  @Override
  public void setWorkingDirectory(Path dir) {
    workingDir = makeQualified(dir);
  }

  /**
   * {@value StrataConfigKeys#BLOCK_SIZE} if set, else the service's default block size (asked
   * once). NB: Hadoop's signature has no IOException; a service that cannot be reached fails
   * with an UncheckedIOException here, as the create that usually follows would fail.
   */
  @Override
  public long getDefaultBlockSize(Path f) {
    long configured = getConf().getLongBytes(StrataConfigKeys.BLOCK_SIZE, 0);
    if (configured > 0) {
      return configured;
    }
    try {
      return client.serverDefaults().blockSize();
    } catch (IOException e) {
      throw new UncheckedIOException(HadoopErrors.translate(e));
    }
  }

  /**
   * The service's defaults, as HDFS's NameNode gives them: the block size of {@link
   * #getDefaultBlockSize}, and the trash interval that {@code hadoop fs -rm} follows (Hadoop's
   * trash policy takes a server's over the client's {@code fs.trash.interval}).
   */
  @Override
  public FsServerDefaults getServerDefaults(Path p) throws IOException {
    try {
      ServerDefaults d = client.serverDefaults();
      return new FsServerDefaults(getDefaultBlockSize(p), 512, 64 * 1024,
          (short) Math.max(1, d.replication()), 4096, false,
          TimeUnit.MILLISECONDS.toMinutes(d.trashIntervalMs()), DataChecksum.Type.CRC32C);
    } catch (IOException e) {
      throw HadoopErrors.translate(e);
    }
  }

  /**
   * The block size a create sends: none (the service's default) unless the user asked for
   * one, in {@value StrataConfigKeys#BLOCK_SIZE} or by passing another size than the default.
   */
  private long requestedBlockSize(Path f, long blockSize) {
    boolean configured = getConf().getLongBytes(StrataConfigKeys.BLOCK_SIZE, 0) > 0;
    if (blockSize <= 0 || !configured && blockSize == getDefaultBlockSize(f)) {
      return 0;
    }
    return blockSize;
  }

  @Override
  public short getDefaultReplication(Path f) {
    return (short) getConf().getInt(StrataConfigKeys.REPLICATION,
        StrataConfigKeys.DEFAULT_REPLICATION);
  }

  /** The scheme's counters (bytes, read and write operations), shared by its instances. */
  @Override
  public StorageStatistics getStorageStatistics() {
    return FileSystem.getGlobalStorageStatistics().get(SCHEME);
  }

  /**
   * What this file system's namespace is: its mode (block or cache) and, in cache mode, its sync
   * interval. Asked of the service at {@link #initialize}, or now if it could not say then.
   */
  public Namespace getNamespace() throws IOException {
    Namespace ns = namespaceInfo;
    if (ns == null) {
      try {
        ns = client.namespace(namespace);
      } catch (IOException e) {
        throw HadoopErrors.translate(e);
      }
      namespaceInfo = ns;
    }
    return ns;
  }

  /** The core client behind this file system (for tests and tools). */
  public StrataClient getClient() {
    return client;
  }

  /**
   * Converts a Hadoop path of this file system into a Strata path. One that breaks the path rule
   * is an {@link InvalidPathException} (an IllegalArgumentException, as HDFS's "not a valid DFS
   * filename"), as the service's refusal of it would have been.
   */
  StrataPath toStrata(Path p) {
    Path q = makeQualified(p);
    String path = q.toUri().getPath();
    String problem = PathRule.problem(path.isEmpty() ? "/" : path).orElse(null);
    if (problem != null) {
      throw new InvalidPathException(path, PathRule.PREFIX + problem);
    }
    return new StrataPath(namespace, path.isEmpty() ? "/" : path);
  }

  /**
   * Converts a Strata path of a file system of {@code scheme} and {@code namespace} into a
   * qualified Hadoop path: the Path its (scheme, authority, path) constructor makes, without the
   * regular expressions it normalises the path with (a StrataPath is normal: absolute, no empty
   * component, no trailing slash). A listing's entries take {@link EntryPaths}'s quicker way.
   */
  static Path hadoopPath(String scheme, String namespace, StrataPath p) {
    try {
      return new Path(new URI(scheme, namespace.isEmpty() ? null : namespace, p.path(), null,
          null));
    } catch (java.net.URISyntaxException e) {
      throw new IllegalArgumentException(e);
    }
  }

  /** The entries' paths of one listing (see {@link EntryPaths}). */
  private EntryPaths entryPaths() {
    return new EntryPaths(uri.getScheme(), namespace);
  }

  /** The status of {@code fi}, whose qualified Hadoop path is {@code path}. */
  private static FileStatus toStatus(FileInfo fi, Path path) {
    return new FileStatus(fi.length(), fi.directory(), fi.replication(), fi.blockSize(),
        fi.modificationTime(), fi.accessTime(), new FsPermission((short) (fi.permission() & 01777)),
        fi.owner(), fi.group(), null, path, fi.hasAcl(), false, false);
  }

  private LocatedFileStatus toLocated(FileInfo fi, EntryPaths paths) throws IOException {
    FileStatus st = toStatus(fi, paths.of(fi.path()));
    return new LocatedFileStatus(st, st.isFile() ? getFileBlockLocations(st, 0, st.getLen())
        : null);
  }

  /**
   * Opens {@code f}. NB: {@code bufferSize} (Hadoop's io.file.buffer.size, 4 KiB) is ignored:
   * {@code fs.strata.read.buffer} sizes the stream's buffer.
   */
  @Override
  public FSDataInputStream open(Path f, int bufferSize) throws IOException {
    return open(f, false);
  }

  private FSDataInputStream open(Path f, boolean random) throws IOException {
    StrataPath p = toStrata(f);
    statistics.incrementReadOps(1);
    try {
      return new FSDataInputStream(new StrataInputStream(client.open(p), statistics,
          readBuffer, random));
    } catch (IOException e) {
      throw HadoopErrors.translate(e);
    }
  }

  /**
   * {@code openFile}: a read policy of random access ({@code fs.option.openfile.read.policy}:
   * the first of its list that Strata knows) opens the stream in random access (see {@link
   * StrataInputStream}); the others, and none, adaptive.
   */
  @Override
  protected CompletableFuture<FSDataInputStream> openFileWithOptions(Path path,
      OpenFileParameters parameters) throws IOException {
    AbstractFSBuilderImpl.rejectUnknownMandatoryKeys(parameters.getMandatoryKeys(),
        Options.OpenFileOptions.FS_OPTION_OPENFILE_STANDARD_OPTIONS, "for " + path);
    boolean random = randomPolicy(parameters.getOptions()
        .get(Options.OpenFileOptions.FS_OPTION_OPENFILE_READ_POLICY, ""));
    return LambdaUtils.eval(new CompletableFuture<>(), () -> open(path, random));
  }

  /** Whether read policy list {@code policies} asks for random access first. */
  static boolean randomPolicy(String policies) {
    for (String p : policies.split(",")) {
      switch (p.trim().toLowerCase(java.util.Locale.ROOT)) {
        case "random", "columnar", "vector", "parquet", "orc", "hbase":
          return true;
        case "sequential", "whole-file", "adaptive", "default", "avro", "csv", "json":
          return false;
        default:
          // a policy Strata does not know: the next one decides
      }
    }
    return false;
  }

  /**
   * The blocks of {@code file} overlapping {@code [start, start+len)} (the one holding
   * {@code start} when len is 0), each located at its home worker: names are the worker's
   * host:port, hosts its host name. A task scheduled there reads the block short-circuit from
   * the worker's cache. A small file stored inline has no block and gets Hadoop's default (one
   * location, localhost).
   */
  @Override
  public BlockLocation[] getFileBlockLocations(FileStatus file, long start, long len)
      throws IOException {
    if (file == null) {
      return null;
    }
    if (start < 0 || len < 0) {
      throw new IllegalArgumentException("Invalid start or len parameter");
    }
    if (file.getLen() <= start) {
      return new BlockLocation[0];
    }
    List<io.strata.core.block.BlockLocation> blocks;
    statistics.incrementReadOps(1);
    try {
      blocks = client.blockLocations(toStrata(file.getPath()));
    } catch (IOException e) {
      throw HadoopErrors.translate(e);
    }
    if (blocks.isEmpty()) {
      return super.getFileBlockLocations(file, start, len);
    }
    long end = len == 0 ? start + 1 : (len > Long.MAX_VALUE - start ? Long.MAX_VALUE
        : start + len);
    List<BlockLocation> out = new ArrayList<>();
    for (io.strata.core.block.BlockLocation b : blocks) {
      if (b.offset() < end && b.offset() + b.length() > start) {
        out.add(new BlockLocation(new String[] {b.address()}, new String[] {b.host()},
            b.offset(), b.length()));
      }
    }
    return out.toArray(new BlockLocation[0]);
  }

  @Override
  public FSDataOutputStream create(Path f, FsPermission permission, boolean overwrite,
      int bufferSize, short replication, long blockSize, Progressable progress)
      throws IOException {
    return create(f, permission, overwrite, true, replication, blockSize);
  }

  /**
   * createNonRecursive: the parent must exist. Flags as HDFS's: {@code APPEND} appends to the
   * file (with {@code CREATE}, creates it if it is missing), {@code OVERWRITE} replaces it.
   */
  @Override
  public FSDataOutputStream createNonRecursive(Path f, FsPermission permission,
      EnumSet<CreateFlag> flags, int bufferSize, short replication, long blockSize,
      Progressable progress) throws IOException {
    return create(f, permission, flags, false, replication, blockSize);
  }

  /** create with flags (FileSystem.createFile's builder comes here): as createNonRecursive. */
  @Override
  public FSDataOutputStream create(Path f, FsPermission permission, EnumSet<CreateFlag> flags,
      int bufferSize, short replication, long blockSize, Progressable progress,
      Options.ChecksumOpt checksumOpt) throws IOException {
    return create(f, permission, flags, true, replication, blockSize);
  }

  private FSDataOutputStream create(Path f, FsPermission permission, EnumSet<CreateFlag> flags,
      boolean createParents, short replication, long blockSize) throws IOException {
    CreateFlag.validate(flags);
    if (!flags.contains(CreateFlag.APPEND)) {
      return create(f, permission, flags.contains(CreateFlag.OVERWRITE), createParents,
          replication, blockSize);
    }
    if (!flags.contains(CreateFlag.CREATE)) {
      return append(f, 0, null);
    }
    try {
      return append(f, 0, null);
    } catch (FileNotFoundException e) {
      LOG.debug("create {} with APPEND: not there, created", f);
      return create(f, permission, false, createParents, replication, blockSize);
    }
  }

  private FSDataOutputStream create(Path f, FsPermission permission, boolean overwrite,
      boolean createParents, short replication, long blockSize) throws IOException {
    StrataPath p = toStrata(f);
    int perm = (permission == null ? FsPermission.getFileDefault() : permission).toShort();
    statistics.incrementWriteOps(1);
    try {
      CreateOptions o = new CreateOptions(perm, overwrite, createParents,
          Math.max(0, replication), requestedBlockSize(f, blockSize));
      return new FSDataOutputStream(new StrataOutputStream(deferCreates
          ? client.createDeferred(p, o) : client.create(p, o)), statistics);
    } catch (IOException e) {
      throw HadoopErrors.translate(e);
    }
  }

  /**
   * Reopens closed file {@code f} at its end for writing, under this client's lease (HDFS's
   * append): what is written goes after what it holds, visible on hflush or close. The stream's
   * position starts at the file's length. A file being written is {@code
   * AlreadyBeingCreatedException}; a missing one FileNotFoundException.
   */
  @Override
  public FSDataOutputStream append(Path f, int bufferSize, Progressable progress)
      throws IOException {
    StrataPath p = toStrata(f);
    statistics.incrementWriteOps(1);
    try {
      FileWriter w = client.append(p);
      return new FSDataOutputStream(new StrataOutputStream(w), statistics, w.length());
    } catch (IOException e) {
      throw HadoopErrors.translate(e);
    }
  }

  /**
   * Cuts closed file {@code f} to {@code newLength}, at most its length. The cut is done when
   * this returns, so the answer is always true (HDFS answers false while it recovers the last
   * block in the background).
   */
  @Override
  public boolean truncate(Path f, long newLength) throws IOException {
    if (newLength < 0) {
      throw new HadoopIllegalArgumentException("truncate " + f
          + ": cannot truncate to a negative file size: " + newLength);
    }
    StrataPath p = toStrata(f);
    statistics.incrementWriteOps(1);
    try {
      client.truncate(p, newLength);
      return true;
    } catch (IOException e) {
      throw HadoopErrors.translate(e);
    }
  }

  /**
   * FileSystem.rename, as HDFS: an existing directory destination receives the source as a
   * child; false (not an exception) for a missing source or destination parent, an existing
   * destination, a destination under a file, or the root. A directory into its own subtree is an
   * IOException, as in HDFS.
   */
  @Override
  public boolean rename(Path src, Path dst) throws IOException {
    StrataPath s = toStrata(src);
    StrataPath d = toStrata(dst);
    statistics.incrementWriteOps(1);
    try {
      client.rename(s, d, false, false);
      return true;
    } catch (IOException e) {
      if (e instanceof StrataError) {
        switch (((StrataError) e).reason()) {
          case NOT_FOUND:
          case ALREADY_EXISTS:
          case PARENT_NOT_DIRECTORY:
          case IS_DIRECTORY:
          case NOT_DIRECTORY:
          case ROOT_DIRECTORY:
            LOG.debug("rename {} to {}: false: {}", src, dst, e.getMessage());
            return false;
          default:
            break;
        }
      }
      throw HadoopErrors.translate(e);
    }
  }

  /**
   * rename2 (the FileContext rename): the destination is never entered; OVERWRITE replaces a
   * file or an empty directory. Atomic on the service. NB: Hadoop deprecates this method for
   * direct callers only; FileContext reaches it through DelegateToFileSystem.
   */
  @Override
  @SuppressWarnings("deprecation")
  protected void rename(Path src, Path dst, Options.Rename... options) throws IOException {
    boolean overwrite = false;
    for (Options.Rename o : options) {
      overwrite |= o == Options.Rename.OVERWRITE;
    }
    rename2(src, dst, overwrite);
  }

  /** rename2 in one call to the service (StrataFs uses it for FileContext.rename). */
  void rename2(Path src, Path dst, boolean overwrite) throws IOException {
    statistics.incrementWriteOps(1);
    try {
      client.rename(toStrata(src), toStrata(dst), overwrite, true);
    } catch (IOException e) {
      throw HadoopErrors.translate(e);
    }
  }

  /**
   * Deletes {@code f}; false when nothing was there, and for the root, which HDFS does not delete
   * either (but a non-recursive delete of a non-empty root fails, as in HDFS).
   */
  @Override
  public boolean delete(Path f, boolean recursive) throws IOException {
    StrataPath p = toStrata(f);
    statistics.incrementWriteOps(1);
    try {
      return client.delete(p, recursive);
    } catch (IOException e) {
      if (e instanceof StrataError) {
        Reason r = ((StrataError) e).reason();
        if (r == Reason.ROOT_DIRECTORY && !recursive && client.list(p).hasNext()) {
          // HDFS checks emptiness before refusing the root.
          throw new PathIsNotEmptyDirectoryException(f.toString());
        }
        if (r == Reason.NOT_FOUND || r == Reason.ROOT_DIRECTORY) {
          LOG.debug("delete {}: false: {}", f, e.getMessage());
          return false;
        }
      }
      throw HadoopErrors.translate(e);
    }
  }

  @Override
  public FileStatus[] listStatus(Path f) throws IOException {
    List<FileStatus> out = new ArrayList<>();
    RemoteIterator<FileStatus> it = listStatusIterator(f);
    while (it.hasNext()) {
      out.add(it.next());
    }
    return out.toArray(new FileStatus[0]);
  }

  @Override
  public RemoteIterator<FileStatus> listStatusIterator(Path f) throws IOException {
    EntryPaths paths = entryPaths();
    return Listings.of(list(f), fi -> toStatus(fi, paths.of(fi.path())));
  }

  @Override
  public RemoteIterator<LocatedFileStatus> listLocatedStatus(Path f) throws IOException {
    EntryPaths paths = entryPaths();
    return new Listings<>(list(f), fi -> toLocated(fi, paths));
  }

  private IOIterator<FileInfo> list(Path f) throws IOException {
    StrataPath p = toStrata(f);
    statistics.incrementReadOps(1);
    try {
      return client.list(p);
    } catch (IOException e) {
      throw HadoopErrors.translate(e);
    }
  }

  @Override
  public boolean mkdirs(Path f, FsPermission permission) throws IOException {
    StrataPath p = toStrata(f);
    int perm = (permission == null ? FsPermission.getDirDefault() : permission).toShort();
    statistics.incrementWriteOps(1);
    try {
      client.mkdirs(p, perm, true);
      return true;
    } catch (IOException e) {
      throw HadoopErrors.translate(e);
    }
  }

  @Override
  public FileStatus getFileStatus(Path f) throws IOException {
    Path q = makeQualified(f);
    StrataPath p = toStrata(q);
    statistics.incrementReadOps(1);
    try {
      // NB: q, not toHadoop(p), which would parse the same URI again.
      return toStatus(client.getFileStatus(p), q);
    } catch (IOException e) {
      throw HadoopErrors.translate(e);
    }
  }

  /**
   * Exact, from the service's per-directory aggregates, without a walk. In a cache-mode namespace,
   * of what the service has loaded from the bucket: the first such answer of this instance says
   * so in a warning, the later ones at debug level (Hadoop's ContentSummary has no place for it).
   */
  @Override
  public ContentSummary getContentSummary(Path f) throws IOException {
    StrataPath p = toStrata(f);
    statistics.incrementReadOps(1);
    try {
      io.strata.core.ContentSummary cs = client.getContentSummary(p);
      if (cs.loadedOnly()) {
        warnLoadedOnly(f);
      }
      return new ContentSummary.Builder().length(cs.length()).fileCount(cs.fileCount())
          .directoryCount(cs.directoryCount()).spaceConsumed(cs.spaceConsumed())
          .quota(cs.nameQuota()).spaceQuota(cs.spaceQuota()).build();
    } catch (IOException e) {
      throw HadoopErrors.translate(e);
    }
  }

  private void warnLoadedOnly(Path f) {
    String m = "{}: the counts are of what Strata has loaded from the bucket of cache-mode "
        + "namespace {}, which may be less than the bucket holds (strata admin load --metadata "
        + "PATH loads a subtree whole)";
    if (warnedLoadedOnly.compareAndSet(false, true)) {
      LOG.warn(m, makeQualified(f), namespace);
    } else {
      LOG.debug(m, makeQualified(f), namespace);
    }
  }

  @Override
  public void setPermission(Path f, FsPermission permission) throws IOException {
    StrataPath p = toStrata(f);
    statistics.incrementWriteOps(1);
    try {
      client.setPermission(p, permission.toShort());
    } catch (IOException e) {
      throw HadoopErrors.translate(e);
    }
  }

  @Override
  public void setOwner(Path f, String username, String groupname) throws IOException {
    StrataPath p = toStrata(f);
    statistics.incrementWriteOps(1);
    try {
      client.setOwner(p, username, groupname);
    } catch (IOException e) {
      throw HadoopErrors.translate(e);
    }
  }

  /** Times in ms since the epoch; -1 leaves one unchanged. */
  @Override
  public void setTimes(Path f, long mtime, long atime) throws IOException {
    StrataPath p = toStrata(f);
    statistics.incrementWriteOps(1);
    try {
      client.setTimes(p, mtime, atime);
    } catch (IOException e) {
      throw HadoopErrors.translate(e);
    }
  }

  /** Closes a file its writer left open; true when it is closed now. */
  /** A call of {@link HadoopFeatures} on a path, its errors translated. */
  private interface FeatureCall<T> {
    T call(HadoopFeatures f, StrataPath p) throws IOException;
  }

  private <T> T feature(Path path, boolean write, FeatureCall<T> c) throws IOException {
    StrataPath p = toStrata(path);
    if (write) {
      statistics.incrementWriteOps(1);
    } else {
      statistics.incrementReadOps(1);
    }
    try {
      return c.call(features, p);
    } catch (IOException e) {
      throw HadoopErrors.translate(e);
    }
  }

  @Override
  public QuotaUsage getQuotaUsage(Path f) throws IOException {
    return getContentSummary(f);
  }

  /** HDFS's setQuota: a superuser's call; {@code HdfsConstants.QUOTA_RESET} (-1) clears one. */
  @Override
  public void setQuota(Path f, long names, long space) throws IOException {
    feature(f, true, (h, p) -> { h.setQuota(p, names, space); return null; });
  }

  @Override
  public void setXAttr(Path f, String name, byte[] value, EnumSet<XAttrSetFlag> flag)
      throws IOException {
    feature(f, true, (h, p) -> { h.setXAttr(p, name, value, flag); return null; });
  }

  @Override
  public byte[] getXAttr(Path f, String name) throws IOException {
    return feature(f, false, (h, p) -> h.getXAttr(p, name));
  }

  @Override
  public Map<String, byte[]> getXAttrs(Path f) throws IOException {
    return feature(f, false, (h, p) -> h.getXAttrs(p, List.of()));
  }

  @Override
  public Map<String, byte[]> getXAttrs(Path f, List<String> names) throws IOException {
    return feature(f, false, (h, p) -> h.getXAttrs(p, names));
  }

  @Override
  public List<String> listXAttrs(Path f) throws IOException {
    return feature(f, false, HadoopFeatures::listXAttrs);
  }

  @Override
  public void removeXAttr(Path f, String name) throws IOException {
    feature(f, true, (h, p) -> { h.removeXAttr(p, name); return null; });
  }

  @Override
  public void modifyAclEntries(Path f, List<AclEntry> spec) throws IOException {
    acl(f, AclChange.MODIFY, spec);
  }

  @Override
  public void removeAclEntries(Path f, List<AclEntry> spec) throws IOException {
    acl(f, AclChange.REMOVE_ENTRIES, spec);
  }

  @Override
  public void removeDefaultAcl(Path f) throws IOException {
    acl(f, AclChange.REMOVE_DEFAULT, List.of());
  }

  @Override
  public void removeAcl(Path f) throws IOException {
    acl(f, AclChange.REMOVE, List.of());
  }

  @Override
  public void setAcl(Path f, List<AclEntry> spec) throws IOException {
    acl(f, AclChange.SET, spec);
  }

  private void acl(Path f, AclChange change, List<AclEntry> spec) throws IOException {
    feature(f, true, (h, p) -> { h.modifyAcl(p, change, spec); return null; });
  }

  @Override
  public AclStatus getAclStatus(Path f) throws IOException {
    return feature(f, false, HadoopFeatures::getAclStatus);
  }

  @Override
  public void setStoragePolicy(Path f, String policy) throws IOException {
    feature(f, true, (h, p) -> { h.setStoragePolicy(p, policy); return null; });
  }

  @Override
  public void unsetStoragePolicy(Path f) throws IOException {
    setStoragePolicy(f, "");
  }

  @Override
  public BlockStoragePolicySpi getStoragePolicy(Path f) throws IOException {
    return feature(f, false, HadoopFeatures::getStoragePolicy);
  }

  @Override
  public Collection<? extends BlockStoragePolicySpi> getAllStoragePolicies() throws IOException {
    return feature(new Path("/"), false, (h, p) -> h.getAllStoragePolicies());
  }

  @Override
  public boolean recoverLease(Path f) throws IOException {
    StrataPath p = toStrata(f);
    checkIsFile(f, p);
    statistics.incrementWriteOps(1);
    try {
      return client.recoverLease(p);
    } catch (IOException e) {
      throw HadoopErrors.translate(e);
    }
  }

  @Override
  public boolean isFileClosed(Path f) throws IOException {
    return !checkIsFile(f, toStrata(f)).underConstruction();
  }

  /** HDFS's messages, which LeaseRecoverable callers match. */
  private FileInfo checkIsFile(Path f, StrataPath p) throws IOException {
    FileInfo fi;
    try {
      statistics.incrementReadOps(1);
      fi = client.getFileStatus(p);
    } catch (FileNotFoundException e) {
      FileNotFoundException fnf = new FileNotFoundException("File does not exist: " + f);
      fnf.initCause(e);
      throw fnf;
    } catch (IOException e) {
      throw HadoopErrors.translate(e);
    }
    if (fi.directory()) {
      throw new FileNotFoundException("Path is not a file: " + f);
    }
    return fi;
  }

  /**
   * By the namespace's mode ({@link Capabilities}): HDFS's answers in block mode, S3A's for
   * object-store semantics in cache mode (renames not atomic, directory markers kept).
   */
  @Override
  public boolean hasPathCapability(Path path, String capability) throws IOException {
    String c = validatePathCapabilityArgs(makeQualified(path), capability);
    java.util.Optional<Boolean> answer = Capabilities.of(getNamespace(), c);
    return answer.isPresent() ? answer.get() : super.hasPathCapability(path, capability);
  }

  @Override
  public void close() throws IOException {
    try {
      super.close();
    } finally {
      if (client != null) {
        client.close();
      }
    }
  }

  @Override
  public String toString() {
    return "StrataFileSystem{" + uri + ", user=" + (client == null ? "?" : client.user()) + "}";
  }
}
