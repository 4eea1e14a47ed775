package io.strata.core;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import io.strata.core.error.Reason;
import io.strata.core.error.ServiceUnavailableException;
import io.strata.core.error.StrataError;
import io.strata.core.error.StrataException;
import io.strata.core.error.StrataFileNotFoundException;
import io.strata.core.testing.DevClusterRule;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.After;
import org.junit.Before;
import org.junit.ClassRule;
import org.junit.Test;

/** The core client against a real strata server --dev. */
public class StrataClientTest {
  @ClassRule public static final DevClusterRule SERVER = new DevClusterRule();

  private StrataClient client;
  private StrataPath base;

  @Before
  public void setUp() throws IOException {
    client = StrataClient.connect(SERVER.clientConfig().listPageSize(3)
        .leaseRenewInterval(Duration.ofMillis(50)).build());
    base = StrataPath.parse("/" + getClass().getSimpleName() + "-" + System.nanoTime());
    assertTrue(client.mkdirs(base, 0755, true));
  }

  @After
  public void tearDown() throws IOException {
    client.delete(base, true);
    client.close();
  }

  private void write(StrataPath p, byte[] data) throws IOException {
    try (FileWriter w = client.create(p, CreateOptions.defaults().withOverwrite(true))) {
      w.write(data);
    }
  }

  private byte[] read(StrataPath p) throws IOException {
    try (FileReader r = client.open(p)) {
      byte[] b = new byte[(int) r.length()];
      int off = 0;
      while (off < b.length) {
        off += r.read(off, b, off, b.length - off);
      }
      assertEquals(-1, r.read(off, new byte[1], 0, 1));
      return b;
    }
  }

  @Test
  public void smallFileRoundTrip() throws IOException {
    StrataPath f = base.child("f");
    byte[] data = "hello strata".getBytes(StandardCharsets.UTF_8);
    write(f, data);
    assertArrayEquals(data, read(f));
    FileInfo st = client.getFileStatus(f);
    assertFalse(st.directory());
    assertEquals(data.length, st.length());
    assertEquals(0644, st.permission());
    assertEquals(f, st.path());
    assertFalse(st.underConstruction());
  }

  @Test
  public void emptyFileAndExactlyTheInlineLimit() throws IOException {
    write(base.child("empty"), new byte[0]);
    assertEquals(0, read(base.child("empty")).length);
    byte[] four = new byte[4096];
    four[4095] = 7;
    write(base.child("four"), four);
    assertArrayEquals(four, read(base.child("four")));
  }

  @Test
  public void leaseIsRenewedWhileWriting() throws Exception {
    StrataPath f = base.child("slow");
    long before = client.leaseRenewals();
    try (FileWriter w = client.create(f, CreateOptions.defaults())) {
      assertTrue(client.renewingLeases());
      LeaseRenewerTest.waitFor(() -> client.leaseRenewals() >= before + 2);
      w.write(1);
      assertTrue(client.getFileStatus(f).underConstruction());
    }
    assertFalse(client.renewingLeases());
    assertEquals(1, client.getFileStatus(f).length());
  }

  @Test
  public void pagedListingSeesEveryEntryOnce() throws IOException {
    List<String> want = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      String name = String.format("e%02d", i);
      want.add(name);
      if (i % 2 == 0) {
        client.mkdirs(base.child(name), 0755, false);
      } else {
        write(base.child(name), new byte[i]);
      }
    }
    List<String> got = new ArrayList<>();
    IOIterator<FileInfo> it = client.list(base);
    while (it.hasNext()) {
      FileInfo st = it.next();
      assertEquals(base.child(st.path().name()), st.path());
      got.add(st.path().name());
    }
    assertEquals(want, got);
    IOIterator<FileInfo> self = client.list(base.child("e01"));
    assertTrue(self.hasNext());
    assertEquals(base.child("e01"), self.next().path());
    assertFalse(self.hasNext());
    assertThrows(StrataFileNotFoundException.class, () -> client.list(base.child("missing")));
  }

  @Test
  public void renameDeleteAndSummary() throws IOException {
    StrataPath d = base.child("d");
    client.mkdirs(d.child("sub"), 0755, true);
    write(d.child("sub").child("f"), new byte[10]);
    ContentSummary cs = client.getContentSummary(d);
    assertEquals(new ContentSummary(10, 1, 2, cs.spaceConsumed(), false), cs);
    StrataPath moved = client.rename(d, base.child("e"), false, false);
    assertEquals(base.child("e"), moved);
    client.mkdirs(base.child("into"), 0755, false);
    assertEquals(base.child("into").child("e"),
        client.rename(base.child("e"), base.child("into"), false, false));
    StrataException notEmpty = assertThrows(StrataException.class,
        () -> client.delete(base.child("into"), false));
    assertEquals(Reason.DIRECTORY_NOT_EMPTY, notEmpty.reason());
    assertTrue(client.delete(base.child("into"), true));
    assertFalse(client.delete(base.child("into"), true));
  }

  @Test
  public void attributes() throws IOException {
    StrataPath f = base.child("attrs");
    write(f, new byte[1]);
    client.setPermission(f, 0600);
    client.setTimes(f, 1_000_000L, -1);
    FileInfo st = client.getFileStatus(f);
    assertEquals(0600, st.permission());
    assertEquals(1_000_000L, st.modificationTime());
    client.setOwner(f, "alice", "staff");
    st = client.getFileStatus(f);
    assertEquals("alice", st.owner());
    assertEquals("staff", st.group());
  }

  @Test
  public void anotherUserIsDenied() throws IOException {
    client.setPermission(base, 0755);
    try (StrataClient bob = StrataClient.connect(SERVER.cluster().clientConfig("bob", "bob")
        .build())) {
      StrataException e = assertThrows(StrataException.class,
          () -> bob.mkdirs(base.child("x"), 0755, false));
      assertEquals(Reason.PERMISSION_DENIED, e.reason());
    }
  }

  @Test
  public void missingNamespace() {
    StrataFileNotFoundException e = assertThrows(StrataFileNotFoundException.class,
        () -> client.getFileStatus(StrataPath.parse("strata://no-such-ns/x")));
    assertEquals(Reason.NO_NAMESPACE, ((StrataError) e).reason());
  }

  @Test
  public void unreachableServiceFailsFast() throws IOException {
    long start = System.nanoTime();
    try (StrataClient down = StrataClient.connect(ClientConfig.builder("127.0.0.1:1")
        .rpcTimeout(Duration.ofSeconds(20)).retryTimeout(Duration.ZERO).build())) {
      ServiceUnavailableException e = assertThrows(ServiceUnavailableException.class,
          () -> down.getFileStatus(StrataPath.parse("/")));
      assertTrue(e.getMessage(), e.getMessage().contains("127.0.0.1:1"));
    }
    assertTrue("without retries, refused connections fail at once",
        System.nanoTime() - start < Duration.ofSeconds(15).toNanos());
  }

  @Test
  public void anyListedMemberServes() throws IOException {
    try (StrataClient two = StrataClient.connect(
        ClientConfig.builder("127.0.0.1:1," + SERVER.address())
            .token(io.strata.core.StrataToken.parse(SERVER.token())).build())) {
      assertTrue(two.getFileStatus(base).directory());
    }
  }
}
