package io.strata.hadoop;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import io.strata.core.Namespace;
import io.strata.core.error.ObjectChangedException;
import io.strata.core.testing.CacheLakes;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CommonPathCapabilities;
import org.apache.hadoop.fs.ContentSummary;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.log4j.AppenderSkeleton;
import org.apache.log4j.Level;
import org.apache.log4j.Logger;
import org.apache.log4j.spi.LoggingEvent;
import org.junit.After;
import org.junit.Before;
import org.junit.BeforeClass;
import org.junit.ClassRule;
import org.junit.Test;

/**
 * StrataFileSystem on cache-mode namespaces (docs/cachemode.md): what it says it can do, what it
 * says of counts, and files whose objects another client replaces. The namespaces are over local
 * directories: {@code lake} (sync interval 0) and {@code frozen} (-1).
 */
public class TestStrataCacheMode {
  @ClassRule public static final CacheLakes LAKES = CacheLakes.local();

  private static java.nio.file.Path frozenBucket;

  private FileSystem lake;
  private FileSystem frozen;

  @BeforeClass
  public static void createFrozen() throws IOException {
    frozenBucket = LAKES.localNamespace("frozen", -1);
  }

  private static FileSystem open(String uri) throws IOException {
    return open(uri, true);
  }

  private static FileSystem open(String uri, boolean shortCircuit) throws IOException {
    Configuration conf = new Configuration();
    conf.set(StrataConfigKeys.META_ADDRESS, LAKES.address());
    conf.set(StrataConfigKeys.TOKEN, LAKES.token());
    conf.setBoolean(StrataConfigKeys.SHORT_CIRCUIT, shortCircuit);
    return FileSystem.newInstance(URI.create(uri), conf);
  }

  @Before
  public void setUp() throws IOException {
    lake = open(CacheLakes.uri(CacheLakes.LOCAL));
    frozen = open("strata://frozen/");
  }

  @After
  public void tearDown() throws IOException {
    lake.close();
    frozen.close();
  }

  @Test
  public void theNamespaceIsKnownAtInitialize() throws IOException {
    Namespace ns = ((StrataFileSystem) frozen).getNamespace();
    assertEquals(Namespace.Mode.CACHE, ns.mode());
    assertEquals(-1, ns.syncIntervalSeconds());
    assertEquals(0, ((StrataFileSystem) lake).getNamespace().syncIntervalSeconds());
  }

  /** S3A's answers where Strata has its semantics; block mode's are in TestStrataStreams. */
  @Test
  public void capabilitiesAreAnObjectStores() throws IOException {
    Path p = new Path("/");
    assertTrue(lake.hasPathCapability(p, Capabilities.MARKER_AWARE));
    assertTrue(lake.hasPathCapability(p, Capabilities.MARKER_POLICY_KEEP));
    assertTrue(lake.hasPathCapability(p, Capabilities.MARKER_ACTION_KEEP));
    assertTrue(lake.hasPathCapability(p, CommonPathCapabilities.LEASE_RECOVERABLE));
    assertTrue(lake.hasPathCapability(p, CommonPathCapabilities.BULK_DELETE));
    for (String no : new String[] {Capabilities.ATOMIC_RENAME,
        CommonPathCapabilities.FS_PERMISSIONS, Capabilities.MARKER_POLICY_DELETE,
        Capabilities.MARKER_POLICY_AUTHORITATIVE, Capabilities.MARKER_ACTION_DELETE,
        CommonPathCapabilities.ETAGS_AVAILABLE, CommonPathCapabilities.ETAGS_PRESERVED_IN_RENAME,
        CommonPathCapabilities.DIRECTORY_LISTING_INCONSISTENT,
        CommonPathCapabilities.VIRTUAL_BLOCK_LOCATIONS, CommonPathCapabilities.FS_APPEND,
        CommonPathCapabilities.FS_MULTIPART_UPLOADER, CommonPathCapabilities.ABORTABLE_STREAM,
        CommonPathCapabilities.FS_SYMLINKS, CommonPathCapabilities.FS_CONCAT}) {
      assertFalse(no, lake.hasPathCapability(p, no));
    }
    // getFileChecksum, COMPOSITE-CRC32C, as in block mode.
    assertTrue(lake.hasPathCapability(p, CommonPathCapabilities.FS_CHECKSUMS));
  }

  /**
   * An object's checksum is the CRC32C of its bytes, as a block-mode file's, whether Strata wrote
   * it or found it in the bucket; concat is refused, the files being objects.
   */
  @Test
  public void checksumsAreTheObjectsCrc32cAndConcatIsRefused() throws IOException {
    java.nio.file.Path dir = LAKES.bucketDir().resolve("sums");
    Files.createDirectories(dir);
    byte[] theirs = bytes(300_000, 7);
    Files.write(dir.resolve("theirs.bin"), theirs);
    Path d = new Path("/sums");
    try (FSDataOutputStream out = lake.create(new Path(d, "ours.bin"))) {
      out.write(bytes(70_000, 8));
    }
    assertArrayEquals(crc32c(theirs), lake.getFileChecksum(new Path(d, "theirs.bin")).getBytes());
    assertArrayEquals(crc32c(bytes(70_000, 8)),
        lake.getFileChecksum(new Path(d, "ours.bin")).getBytes());
    assertEquals("COMPOSITE-CRC32C",
        lake.getFileChecksum(new Path(d, "ours.bin")).getAlgorithmName());
    UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class,
        () -> lake.concat(new Path(d, "ours.bin"), new Path[] {new Path(d, "theirs.bin")}));
    assertTrue(e.getMessage(), e.getMessage().contains("cache-mode"));
    assertTrue(lake.delete(d, true));
  }

  /** The CRC32C of {@code b}, big-endian, as a COMPOSITE-CRC32C checksum's bytes. */
  private static byte[] crc32c(byte[] b) {
    java.util.zip.CRC32C c = new java.util.zip.CRC32C();
    c.update(b);
    return java.nio.ByteBuffer.allocate(4).putInt((int) c.getValue()).array();
  }

  /** The files are the bucket's objects, both ways (an object is a plain file here). */
  @Test
  public void filesAreTheBucketsObjects() throws IOException {
    java.nio.file.Path dir = LAKES.bucketDir().resolve("objects");
    Files.createDirectories(dir);
    Files.write(dir.resolve("theirs.bin"), bytes(10_000, 5));
    Path d = new Path("/objects");
    assertArrayEquals(bytes(10_000, 5), readAll(lake, new Path(d, "theirs.bin")));
    try (FSDataOutputStream out = lake.create(new Path(d, "ours.bin"))) {
      out.write(bytes(10_000, 6));
    }
    assertArrayEquals(bytes(10_000, 6), Files.readAllBytes(dir.resolve("ours.bin")));
    assertTrue(lake.rename(new Path(d, "ours.bin"), new Path(d, "moved.bin")));
    assertFalse(Files.exists(dir.resolve("ours.bin")));
    assertArrayEquals(bytes(10_000, 6), Files.readAllBytes(dir.resolve("moved.bin")));
    assertEquals(2, lake.listStatus(d).length);
    assertTrue(lake.delete(d, true));
    assertFalse(Files.exists(dir));
  }

  private static byte[] readAll(FileSystem fs, Path f) throws IOException {
    try (FSDataInputStream in = fs.open(f)) {
      return in.readAllBytes();
    }
  }

  @Test
  public void contentSummaryWarnsOnceThatItCountsWhatIsLoaded() throws IOException {
    Path d = new Path("/summary");
    lake.mkdirs(d);
    try (FSDataOutputStream out = lake.create(new Path(d, "f"))) {
      out.write("abc".getBytes(StandardCharsets.UTF_8));
    }
    List<LoggingEvent> events = new CopyOnWriteArrayList<>();
    AppenderSkeleton appender = new AppenderSkeleton() {
      @Override
      protected void append(LoggingEvent e) {
        events.add(e);
      }

      @Override
      public void close() {}

      @Override
      public boolean requiresLayout() {
        return false;
      }
    };
    Logger log = Logger.getLogger(StrataFileSystem.class);
    Level level = log.getLevel();
    log.setLevel(Level.DEBUG);
    log.addAppender(appender);
    try {
      ContentSummary cs = lake.getContentSummary(d);
      assertEquals(1, cs.getFileCount());
      assertEquals(3, cs.getLength());
      lake.getContentSummary(d);
    } finally {
      log.removeAppender(appender);
      log.setLevel(level);
      lake.delete(d, true);
    }
    String said = "strata://lake/summary: the counts are of what Strata has loaded from the "
        + "bucket of cache-mode namespace lake, which may be less than the bucket holds "
        + "(strata admin load --metadata PATH loads a subtree whole)";
    List<String> got = new ArrayList<>();
    for (LoggingEvent e : events) {
      if (e.getRenderedMessage().contains("the counts are")) {
        got.add(e.getLevel() + " " + e.getRenderedMessage());
      }
    }
    assertEquals(List.of("WARN " + said, "DEBUG " + said), got);
  }

  private static void putObject(String key, byte[] data) throws IOException {
    java.nio.file.Path tmp = Files.createTempFile(frozenBucket.getParent(), "object-", ".tmp");
    Files.write(tmp, data);
    Files.move(tmp, frozenBucket.resolve(key), StandardCopyOption.ATOMIC_MOVE,
        StandardCopyOption.REPLACE_EXISTING);
  }

  private static byte[] bytes(int n, int seed) {
    byte[] b = new byte[n];
    new java.util.Random(seed).nextBytes(b);
    return b;
  }

  /**
   * An object replaced after open: a stream that read nothing reads the new version; one that
   * did fails with ObjectChangedException, an IOException that says to open the file again.
   */
  @Test
  public void streamsOfAChangedObject() throws IOException {
    putObject("changed.bin", bytes(20_000, 1));
    Path f = new Path("/changed.bin");
    try (FSDataInputStream in = frozen.open(f)) {
      putObject("changed.bin", bytes(30_000, 2));
      assertArrayEquals(bytes(30_000, 2), in.readAllBytes());
    }
    // Through the worker's RPC: a short-circuit reader keeps the cache file of the version it
    // read for its lease (2 s), and would go on serving that version until the lease ends,
    // opened again or not: this namespace never looks at the bucket itself (sync interval -1),
    // so only the worker's fetch learns of the change.
    FileSystem rpc = open("strata://frozen/", false);
    try (FSDataInputStream in = rpc.open(f)) {
      assertEquals(bytes(30_000, 2)[0] & 0xff, in.read());
      putObject("changed.bin", bytes(30_000, 3));
      LAKES.cluster().admin("uncache", "strata://frozen/changed.bin");
      IOException e = assertThrows(ObjectChangedException.class, () -> in.readFully(20_000,
          new byte[10]));
      assertTrue(e.getMessage(), e.getMessage().contains("open it again"));
    }
    try (FSDataInputStream in = rpc.open(f)) {
      assertArrayEquals("opened again, the file is the new object", bytes(30_000, 3),
          in.readAllBytes());
    } finally {
      rpc.close();
    }
  }
}
