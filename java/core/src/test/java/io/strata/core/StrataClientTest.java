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
    assertEquals(new ContentSummary(10, 1, 2, cs.spaceConsumed(), false, -1, -1), cs);
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

  /** Every entry under p, depth first, as ls -R walks: a listing per directory. */
  private List<String> walk(StrataClient c, StrataPath p) throws IOException {
    List<String> out = new ArrayList<>();
    IOIterator<FileInfo> it = c.list(p);
    List<StrataPath> sub = new ArrayList<>();
    while (it.hasNext()) {
      FileInfo st = it.next();
      out.add(st.path().path());
      if (st.directory()) {
        sub.add(st.path());
      }
    }
    for (StrataPath d : sub) {
      out.addAll(walk(c, d));
    }
    return out;
  }

  @Test
  public void aWalkSeesEveryEntryOnceAndItsOwnChanges() throws IOException {
    List<String> want = new ArrayList<>();
    for (int d = 0; d < 4; d++) {
      StrataPath dir = base.child("d" + d);
      client.mkdirs(dir, 0755, false);
      want.add(dir.path());
      for (int f = 0; f < 5; f++) {
        write(dir.child("f" + f), new byte[0]);
        want.add(dir.child("f" + f).path());
      }
    }
    List<String> got = walk(client, base);
    java.util.Collections.sort(want);
    java.util.Collections.sort(got);
    assertEquals(want, got);
    // Listing base announces d0..d3, whose first pages are asked for; a change of this client
    // after that must show in their listings, whenever it was read.
    IOIterator<FileInfo> it = client.list(base);
    while (it.hasNext()) {
      it.next();
    }
    write(base.child("d0").child("late"), new byte[0]);
    client.delete(base.child("d1").child("f0"), false);
    List<String> d0 = names(client.list(base.child("d0")));
    assertTrue(d0.toString(), d0.contains("late"));
    assertFalse(names(client.list(base.child("d1"))).contains("f0"));
  }

  private static List<String> names(IOIterator<FileInfo> it) throws IOException {
    List<String> out = new ArrayList<>();
    while (it.hasNext()) {
      out.add(it.next().path().name());
    }
    return out;
  }

  @Test
  public void everyDirectoryAWalkEntersIsChecked() throws IOException {
    client.setPermission(base, 0755);
    client.mkdirs(base.child("open"), 0755, false);
    client.mkdirs(base.child("shut"), 0700, false);
    write(base.child("shut").child("secret"), new byte[0]);
    try (StrataClient bob = StrataClient.connect(SERVER.cluster().clientConfig("bob", "bob")
        .build())) {
      // bob's listing of base announces shut, whose first page bob may not read: asked ahead,
      // it fails, and bob's own listing of it fails as it would have alone.
      assertEquals(List.of("open", "shut"), names(bob.list(base)));
      StrataException e = assertThrows(StrataException.class, () -> bob.list(base.child("shut")));
      assertEquals(Reason.PERMISSION_DENIED, e.reason());
      assertEquals(List.of(), names(bob.list(base.child("open"))));
    }
  }

  @Test
  public void pagesAskedAheadSeeEachEntryOnceWhileOthersChangeTheDirectory() throws Exception {
    // Pages of 3, each asked for while the caller takes the one before: the entries that stay
    // throughout are all listed, once each and in order, whatever another client creates and
    // deletes meanwhile.
    List<String> stay = new ArrayList<>();
    for (int i = 0; i < 60; i++) {
      String name = String.format("k%03d", i);
      stay.add(name);
      write(base.child(name), new byte[0]);
      write(base.child(String.format("k%03d-gone", i)), new byte[0]);
    }
    java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
    java.util.concurrent.atomic.AtomicReference<Throwable> failed =
        new java.util.concurrent.atomic.AtomicReference<>();
    Thread changer;
    try (StrataClient other = StrataClient.connect(SERVER.clientConfig().build())) {
      changer = new Thread(() -> {
        try {
          for (int i = 0; !stop.get() && i < 60; i++) {
            write(other, base.child(String.format("k%03d-new", i)));
            other.delete(base.child(String.format("k%03d-gone", i)), false);
          }
        } catch (IOException e) {
          failed.set(e);
        }
      });
      changer.start();
      for (int pass = 0; pass < 3; pass++) {
        List<String> got = names(client.list(base));
        for (int i = 1; i < got.size(); i++) {
          assertTrue(got.get(i - 1) + " then " + got.get(i), got.get(i - 1).compareTo(got.get(i)) < 0);
        }
        List<String> kept = new ArrayList<>(got);
        kept.retainAll(stay);
        assertEquals(stay, kept);
      }
      stop.set(true);
      changer.join();
    }
    if (failed.get() != null) {
      throw new AssertionError(failed.get());
    }
  }

  private static void write(StrataClient c, StrataPath p) throws IOException {
    try (FileWriter w = c.create(p, CreateOptions.defaults().withOverwrite(true))) {
      w.write(new byte[0]);
    }
  }
}
