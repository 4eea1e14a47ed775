package io.strata.core;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import io.strata.core.error.ObjectChangedException;
import io.strata.core.error.Op;
import io.strata.core.error.Reason;
import io.strata.core.testing.CacheLakes;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Arrays;
import org.junit.After;
import org.junit.Before;
import org.junit.BeforeClass;
import org.junit.ClassRule;
import org.junit.Test;

/**
 * Reading files of a cache-mode namespace whose objects another client replaces: the namespace
 * {@code frozen} (sync interval -1, so that only a reader's refresh makes the service look at
 * the bucket again) over a local directory, where an object is a plain file and a replaced file
 * has another ETag.
 */
public class CacheModeReadTest {
  @ClassRule public static final CacheLakes LAKES = CacheLakes.local();

  private static Path bucket;

  private StrataClient client;

  @BeforeClass
  public static void createNamespace() throws IOException {
    bucket = LAKES.localNamespace("frozen", -1);
  }

  @Before
  public void setUp() throws java.io.IOException {
    client = StrataClient.connect(LAKES.cluster().clientConfig().build());
  }

  @After
  public void tearDown() throws IOException {
    client.close();
  }

  /** Puts {@code data} at {@code key} as another client would: a new file, renamed over. */
  private static void putObject(String key, byte[] data) throws IOException {
    Path tmp = Files.createTempFile(bucket.getParent(), "object-", ".tmp");
    Files.write(tmp, data);
    Files.move(tmp, bucket.resolve(key), StandardCopyOption.ATOMIC_MOVE,
        StandardCopyOption.REPLACE_EXISTING);
  }

  private static byte[] readFully(FileReader r, long position, int len) throws IOException {
    byte[] b = new byte[len];
    int off = 0;
    while (off < len) {
      int n = r.read(position + off, b, off, len - off);
      assertTrue("read returned " + n + " at " + (position + off), n > 0);
      off += n;
    }
    return b;
  }

  @Test
  public void namespaceTellsItsMode() throws IOException {
    Namespace ns = client.namespace("frozen");
    assertEquals(new Namespace("frozen", Namespace.Mode.CACHE, "file://" + bucket, -1), ns);
    assertTrue(ns.cacheMode());
    assertEquals(Namespace.Mode.BLOCK, client.namespace("").mode());
    assertEquals(0, client.namespace(CacheLakes.namespace(CacheLakes.LOCAL))
        .syncIntervalSeconds());
    IOException e = assertThrows(java.io.FileNotFoundException.class,
        () -> client.namespace("nosuch"));
    assertEquals("strata://nosuch/: no such namespace", e.getMessage());
  }

  /** Nothing was read yet: the reader opens the file again, refreshed, and reads the new one. */
  @Test
  public void aReaderThatReadNothingYetReadsTheNewVersion() throws IOException {
    byte[] v1 = DataPathTest.data(100_000, 1);
    byte[] v2 = DataPathTest.data(60_000, 2);
    putObject("first.bin", v1);
    StrataPath p = new StrataPath("frozen", "/first.bin");
    try (FileReader r = client.open(p)) {
      assertEquals(v1.length, r.length());
      putObject("first.bin", v2);
      byte[] got = readFully(r, 0, v2.length);
      assertEquals(v2.length, r.length());
      assertEquals(v2.length, r.info().length());
      assertArrayEquals(v2, got);
      assertEquals(-1, r.read(v2.length, new byte[1], 0, 1));
    }
  }

  /** Bytes were returned: a read of the changed object fails, and says to open it again. */
  @Test
  public void aReaderThatReadBytesFailsOnTheNewVersion() throws IOException {
    byte[] v1 = DataPathTest.data(100_000, 3);
    putObject("second.bin", v1);
    StrataPath p = new StrataPath("frozen", "/second.bin");
    // Reads through the worker's RPC: a short-circuit reader keeps the first version's cache
    // file for its lease (Leases), and would rightly go on serving it.
    try (StrataClient rpc = StrataClient.connect(
            LAKES.cluster().clientConfig().shortCircuit(false).build());
        FileReader r = rpc.open(p)) {
      assertArrayEquals(Arrays.copyOf(v1, 10), readFully(r, 0, 10));
      putObject("second.bin", DataPathTest.data(100_000, 4));
      // What the worker cached of the first version would still be served, rightly: drop it so
      // that the next read has to go to the bucket.
      LAKES.cluster().admin("uncache", p.toString());
      ObjectChangedException e = assertThrows(ObjectChangedException.class,
          () -> readFully(r, 50_000, 10));
      assertEquals(Reason.CHANGED, e.reason());
      assertEquals(Op.READ, e.op());
      assertTrue(e.getMessage(), e.getMessage().startsWith("read " + p + ": the file changed "
          + "in the bucket since it was opened; open it again ("));
      assertEquals(v1.length, r.length());
    }
    // Opened again it reads the new version: the service still has the old one (sync interval
    // -1), so the new reader's first read finds the change and opens the file again, refreshed.
    try (FileReader r = client.open(p)) {
      assertArrayEquals(DataPathTest.data(100_000, 4), readFully(r, 0, 100_000));
    }
  }
}
