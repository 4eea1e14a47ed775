package io.strata.core;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertThrows;

import io.strata.core.block.BlockReader;
import io.strata.core.error.ObjectChangedException;
import io.strata.core.error.Op;
import java.io.IOException;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.Test;

/**
 * FileReader's rule for a cache-mode object that changed (a worker's CHANGED): open it again
 * only while no read has returned bytes, never mixing versions, on blocks that are in memory.
 */
public class FileReaderTest {
  private static final StrataPath PATH = new StrataPath("lake", "/f");

  /** A BlockReader's read. */
  private interface Reads {
    int read(long position, byte[] b, int off, int len) throws IOException;
  }

  private static BlockReader blocks(Reads reads) {
    return new BlockReader() {
      @Override
      public int read(long position, byte[] b, int off, int len) throws IOException {
        return reads.read(position, b, off, len);
      }

      @Override
      public void close() {}
    };
  }

  private static FileReader.Content content(BlockReader blocks, int length, boolean object) {
    FileInfo info = new FileInfo(PATH, false, length, 0666, "u", "g", 0, 0, 1, 1 << 20, false,
        0, 7, false);
    return new FileReader.Content(info, null, blocks, object);
  }

  /** Blocks whose every read fails as a changed object does. */
  private static BlockReader changed() {
    return blocks((position, b, off, len) -> {
      throw new ObjectChangedException(Op.READ, PATH.toString(), "changed", null);
    });
  }

  /** Blocks holding {@code data}. */
  private static BlockReader holding(byte[] data) {
    return blocks((position, b, off, len) -> {
      int n = (int) Math.min(len, data.length - position);
      System.arraycopy(data, (int) position, b, off, n);
      return n;
    });
  }

  private static byte[] filled(int n, char c) {
    byte[] b = new byte[n];
    Arrays.fill(b, (byte) c);
    return b;
  }

  @Test
  public void opensAgainBeforeAnyByte() throws IOException {
    AtomicInteger reopens = new AtomicInteger();
    FileReader r = new FileReader(content(changed(), 100, true), () -> {
      reopens.incrementAndGet();
      return content(holding(filled(50, 'n')), 50, true);
    });
    byte[] b = new byte[80];
    assertEquals(50, r.read(0, b, 0, 80));
    assertArrayEquals(filled(50, 'n'), Arrays.copyOf(b, 50));
    assertEquals(50, r.length());
    assertEquals(1, reopens.get());
  }

  @Test
  public void neverAfterAByte() throws IOException {
    AtomicInteger calls = new AtomicInteger();
    BlockReader onceThenChanged = blocks((position, b, off, len) -> {
      if (calls.getAndIncrement() > 0) {
        throw new ObjectChangedException(Op.READ, PATH.toString(), "changed", null);
      }
      b[off] = 'o';
      return 1;
    });
    FileReader r = new FileReader(content(onceThenChanged, 100, true), () -> {
      throw new AssertionError("opened again after a byte was returned");
    });
    assertEquals(1, r.read(0, new byte[1], 0, 1));
    assertThrows(ObjectChangedException.class, () -> r.read(1, new byte[1], 0, 1));
  }

  @Test
  public void onceARead() throws IOException {
    AtomicInteger reopens = new AtomicInteger();
    FileReader r = new FileReader(content(changed(), 100, true), () -> {
      reopens.incrementAndGet();
      return content(changed(), 100, true);
    });
    assertThrows(ObjectChangedException.class, () -> r.read(0, new byte[1], 0, 1));
    assertEquals(1, reopens.get());
    // A later read tries again: nothing was returned yet.
    assertThrows(ObjectChangedException.class, () -> r.read(0, new byte[1], 0, 1));
    assertEquals(2, reopens.get());
  }

  @Test
  public void notInBlockMode() {
    FileReader r = new FileReader(content(changed(), 100, false), () -> {
      throw new AssertionError("a block-mode file opened again");
    });
    assertThrows(ObjectChangedException.class, () -> r.read(0, new byte[1], 0, 1));
  }

  /**
   * A read of the old version that finishes after another read opened the file again does not
   * return the old bytes: it reads the new version.
   */
  @Test
  public void aSlowReadOfTheOldVersionReadsTheNewOne() throws Exception {
    CountDownLatch inside = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    BlockReader old = blocks((position, b, off, len) -> {
      if (position != 0) {
        throw new ObjectChangedException(Op.READ, PATH.toString(), "changed", null);
      }
      inside.countDown();
      try {
        release.await();
      } catch (InterruptedException e) {
        throw new java.io.InterruptedIOException();
      }
      Arrays.fill(b, off, off + len, (byte) 'o');
      return len;
    });
    FileReader.Content next = content(holding(filled(100, 'n')), 100, true);
    FileReader r = new FileReader(content(old, 100, true), () -> next);
    ExecutorService ex = Executors.newSingleThreadExecutor();
    try {
      byte[] slow = new byte[10];
      Future<Integer> f = ex.submit(() -> r.read(0, slow, 0, 10));
      inside.await();
      byte[] b = new byte[10];
      assertEquals(10, r.read(50, b, 0, 10));
      assertArrayEquals(filled(10, 'n'), b);
      release.countDown();
      assertEquals(10, (int) f.get(30, TimeUnit.SECONDS));
      assertArrayEquals(filled(10, 'n'), slow);
      assertSame(next.info(), r.info());
    } finally {
      release.countDown();
      ex.shutdownNow();
    }
  }
}
