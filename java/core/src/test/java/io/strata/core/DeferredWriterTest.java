package io.strata.core;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import io.strata.core.error.Reason;
import io.strata.core.error.StrataError;
import io.strata.core.error.StrataFileNotFoundException;
import io.strata.core.testing.DevClusterRule;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.After;
import org.junit.Before;
import org.junit.ClassRule;
import org.junit.Test;

/** {@link StrataClient#createDeferred} against a real strata server --dev. */
public class DeferredWriterTest {
  @ClassRule public static final DevClusterRule SERVER = new DevClusterRule();

  private StrataClient client;
  private StrataPath base;

  @Before
  public void setUp() throws IOException {
    client = StrataClient.connect(SERVER.clientConfig().build());
    base = StrataPath.parse("/" + getClass().getSimpleName() + "-" + System.nanoTime());
    assertTrue(client.mkdirs(base, 0755, true));
  }

  @After
  public void tearDown() throws IOException {
    client.delete(base, true);
    client.close();
  }

  private byte[] read(StrataPath p) throws IOException {
    try (FileReader r = client.open(p)) {
      byte[] b = new byte[(int) r.length()];
      int off = 0;
      while (off < b.length) {
        off += r.read(off, b, off, b.length - off);
      }
      return b;
    }
  }

  private void assertMissing(StrataPath p) {
    assertThrows(StrataFileNotFoundException.class, () -> client.getFileStatus(p));
  }

  @Test
  public void anEmptyFileIsCreatedClosedAtClose() throws IOException {
    StrataPath f = base.child("sub").child("empty");
    FileOutput w = client.createDeferred(f, CreateOptions.defaults());
    assertMissing(f);
    assertFalse("no lease while the create waits", client.renewingLeases());
    w.close();
    FileInfo st = client.getFileStatus(f);
    assertEquals(0, st.length());
    assertFalse(st.underConstruction());
    assertEquals(0644, st.permission());
    w.close();
  }

  @Test
  public void smallContentGoesWithTheCreate() throws IOException {
    StrataPath f = base.child("small");
    byte[] data = "hello, deferred".getBytes(StandardCharsets.UTF_8);
    try (FileOutput w = client.createDeferred(f, CreateOptions.defaults())) {
      w.write(data, 0, 5);
      w.write(data, 5, data.length - 5);
      assertEquals(data.length, w.length());
      assertMissing(f);
    }
    assertArrayEquals(data, read(f));
    assertThrows(IOException.class, () -> client.createDeferred(f, CreateOptions.defaults())
        .write(1));
  }

  @Test
  public void pastTheInlineLimitTheFileIsCreatedThen() throws IOException {
    StrataPath f = base.child("large");
    int limit = client.serverDefaults().inlineLimit();
    byte[] data = new byte[limit + 1000];
    Arrays.fill(data, (byte) 7);
    try (FileOutput w = client.createDeferred(f, CreateOptions.defaults())) {
      w.write(data, 0, limit);
      assertMissing(f);
      w.write(data, limit, 1000);
      assertTrue(client.getFileStatus(f).underConstruction());
      assertTrue(client.renewingLeases());
    }
    assertArrayEquals(data, read(f));
    assertFalse(client.renewingLeases());
  }

  @Test
  public void hflushCreatesTheFile() throws IOException {
    StrataPath f = base.child("flushed");
    try (FileOutput w = client.createDeferred(f, CreateOptions.defaults())) {
      w.write('a');
      w.hflush();
      assertEquals(1, client.getFileStatus(f).length());
      w.write('b');
    }
    assertArrayEquals("ab".getBytes(StandardCharsets.UTF_8), read(f));
  }

  @Test
  public void anExistingFileFailsANoOverwriteCreateAtOnce() throws IOException {
    StrataPath f = base.child("there");
    client.createDeferred(f, CreateOptions.defaults()).close();
    IOException e = assertThrows(IOException.class,
        () -> client.createDeferred(f, CreateOptions.defaults()));
    assertEquals(Reason.ALREADY_EXISTS, ((StrataError) e).reason());
    StrataPath d = base.child("dir");
    client.mkdirs(d, 0755, false);
    assertThrows(IOException.class, () -> client.createDeferred(d, CreateOptions.defaults()));
  }

  @Test
  public void aFileCreatedMeanwhileFailsTheClose() throws IOException {
    StrataPath f = base.child("raced");
    FileOutput w = client.createDeferred(f, CreateOptions.defaults());
    w.write('x');
    try (FileWriter other = client.create(f, CreateOptions.defaults())) {
      other.write('y');
    }
    IOException e = assertThrows(IOException.class, w::close);
    assertEquals(Reason.ALREADY_EXISTS, ((StrataError) e).reason());
    assertArrayEquals(new byte[] {'y'}, read(f));
  }

  @Test
  public void anOverwriteReplacesTheFileAtClose() throws IOException {
    StrataPath f = base.child("replaced");
    try (FileOutput w = client.createDeferred(f, CreateOptions.defaults())) {
      w.write('1');
    }
    try (FileOutput w = client.createDeferred(f, CreateOptions.defaults().withOverwrite(true))) {
      w.write('2');
      assertArrayEquals(new byte[] {'1'}, read(f));
    }
    assertArrayEquals(new byte[] {'2'}, read(f));
  }

  @Test
  public void aNonRecursiveCreateIsSentAtOnce() throws IOException {
    StrataPath f = base.child("missing").child("f");
    assertThrows(IOException.class, () -> client.createDeferred(f,
        new CreateOptions(0644, false, false, 0, 0)));
    StrataPath g = base.child("g");
    FileOutput w = client.createDeferred(g, new CreateOptions(0644, false, false, 0, 0));
    assertTrue(client.getFileStatus(g).underConstruction());
    w.close();
  }
}
