package io.strata.core.worker;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertThrows;

import io.strata.proto.v1.ShortCircuitResponse;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.Random;
import java.util.zip.CRC32C;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/** Reading and checking a cache file's pages as a short-circuit response describes them. */
public class ShortCircuitPagesTest {
  private static final int PS = 4096;
  private static final int CHUNK = 1024;

  private Path file;
  private byte[] block;
  private int[] crcs;

  @Before
  public void setUp() throws IOException {
    // A block of 2.5 pages, the last one short, cached in a file where page i is at i*PS.
    block = new byte[2 * PS + PS / 2];
    new Random(1).nextBytes(block);
    file = Files.createTempFile("strata-page-", ".data");
    Files.write(file, block);
    crcs = new int[3];
    for (int i = 0; i < 3; i++) {
      CRC32C c = new CRC32C();
      c.update(block, i * PS, Math.min(PS, block.length - i * PS));
      crcs[i] = (int) c.getValue();
    }
  }

  @After
  public void tearDown() throws IOException {
    Files.deleteIfExists(file);
  }

  private ShortCircuitResponse response(int firstPage) {
    ShortCircuitResponse.Builder r = ShortCircuitResponse.newBuilder().setOk(true)
        .setPageSize(PS).setFirstPage((long) firstPage * PS).setBlockLength(block.length)
        .setPath(file.toString());
    for (int i = firstPage; i < 3; i++) {
      r.addCrcs(crcs[i]);
    }
    return r.build();
  }

  /** The response of a worker asked for chunks: a CRC per CHUNK bytes from the first page on. */
  private ShortCircuitResponse chunkResponse(int firstPage) {
    ShortCircuitResponse.Builder r = ShortCircuitResponse.newBuilder().setOk(true)
        .setPageSize(PS).setFirstPage((long) firstPage * PS).setBlockLength(block.length)
        .setPath(file.toString()).setChunkSize(CHUNK);
    for (int p = firstPage * PS; p < block.length; p += CHUNK) {
      CRC32C c = new CRC32C();
      c.update(block, p, Math.min(CHUNK, block.length - p));
      r.addChunkCrcs((int) c.getValue());
    }
    return r.build();
  }

  private byte[] read(ShortCircuitResponse r, long in, int len) throws IOException {
    byte[] b = new byte[len + 4];
    try (FileChannel f = FileChannel.open(file, StandardOpenOption.READ)) {
      // A buffer of three chunks: runs end inside a range, and a page does not fit in it.
      ShortCircuit.readPages(f, r, b, 2, len, in, ByteBuffer.allocateDirect(3 * CHUNK));
    }
    return Arrays.copyOfRange(b, 2, 2 + len);
  }

  @Test
  public void rangesAlignedOrNot() throws IOException {
    int[][] ranges = {{0, block.length}, {0, PS}, {PS, PS}, {1, 10}, {PS - 1, 2},
        {PS + 5, PS + 100}, {2 * PS, PS / 2}, {2 * PS + 7, PS / 2 - 7}, {block.length - 1, 1}};
    for (int[] r : ranges) {
      int first = r[0] / PS;
      assertArrayEquals(r[0] + "+" + r[1], Arrays.copyOfRange(block, r[0], r[0] + r[1]),
          read(response(first), r[0], r[1]));
    }
  }

  @Test
  public void rangesByChunks() throws IOException {
    int[][] ranges = {{0, block.length}, {0, PS}, {PS, PS}, {1, 10}, {CHUNK - 1, 2},
        {PS + 5, PS + 100}, {2 * PS, PS / 2}, {2 * PS + 7, PS / 2 - 7}, {block.length - 1, 1}};
    for (int[] r : ranges) {
      for (int first = 0; first <= r[0] / PS; first++) {
        assertArrayEquals(first + ": " + r[0] + "+" + r[1],
            Arrays.copyOfRange(block, r[0], r[0] + r[1]), read(chunkResponse(first), r[0], r[1]));
      }
    }
  }

  @Test
  public void aCorruptChunkIsDetectedAndOnlyIt() throws IOException {
    byte[] bad = block.clone();
    bad[PS + CHUNK + 3] ^= 1;
    Files.write(file, bad);
    assertThrows(ShortCircuit.CorruptPageException.class,
        () -> read(chunkResponse(0), PS + CHUNK, 10));
    assertThrows(ShortCircuit.CorruptPageException.class,
        () -> read(chunkResponse(1), PS + 10, CHUNK));
    // The chunks beside it in its page are read and checked on their own.
    assertArrayEquals(Arrays.copyOfRange(block, PS + 2 * CHUNK, PS + 2 * CHUNK + 10),
        read(chunkResponse(1), PS + 2 * CHUNK, 10));
    assertArrayEquals(Arrays.copyOfRange(block, PS, PS + CHUNK),
        read(chunkResponse(0), PS, CHUNK));
  }

  @Test
  public void unitsLentBeforeTheRangeAreNotRead() throws IOException {
    // A random reader is lent the block's cached pages before its offset too: they are neither
    // read nor checked (a corrupt one there fails no read of the range).
    byte[] bad = block.clone();
    bad[3] ^= 1;
    Files.write(file, bad);
    assertArrayEquals(Arrays.copyOfRange(block, 2 * PS, 2 * PS + 10),
        read(chunkResponse(0), 2 * PS, 10));
    assertArrayEquals(Arrays.copyOfRange(block, 2 * PS, 2 * PS + 10),
        read(response(0), 2 * PS, 10));
    assertThrows(ShortCircuit.CorruptPageException.class, () -> read(response(0), 0, 10));
  }

  @Test
  public void aCorruptPageIsDetected() throws IOException {
    byte[] bad = block.clone();
    bad[PS + 3] ^= 1;
    Files.write(file, bad);
    assertThrows(ShortCircuit.CorruptPageException.class, () -> read(response(0), 0, 10 + PS));
    // Pages outside the range are not read, so not checked.
    assertArrayEquals(Arrays.copyOfRange(block, 0, 10), read(response(0), 0, 10));
  }

  @Test
  public void aShortFileIsCorrupt() throws IOException {
    Files.write(file, Arrays.copyOf(block, 2 * PS));
    assertThrows(ShortCircuit.CorruptPageException.class,
        () -> read(response(2), 2 * PS, 10));
  }

  @Test
  public void missingCrcsOrMalformedResponses() {
    ShortCircuitResponse few = response(0).toBuilder().clearCrcs().addCrcs(crcs[0]).build();
    assertThrows(ShortCircuit.CorruptPageException.class, () -> read(few, 0, 2 * PS));
    ShortCircuitResponse fewChunks = chunkResponse(0).toBuilder().clearChunkCrcs()
        .addChunkCrcs(chunkResponse(0).getChunkCrcs(0)).build();
    assertThrows(ShortCircuit.CorruptPageException.class, () -> read(fewChunks, 0, 2 * CHUNK));
    assertThrows("chunk size not dividing the page size", IOException.class,
        () -> read(chunkResponse(0).toBuilder().setChunkSize(3000).build(), 0, 1));
    assertThrows(IOException.class,
        () -> read(response(0).toBuilder().setPageSize(0).build(), 0, 1));
    assertThrows("first page after the range", IOException.class,
        () -> read(response(1), 0, 1));
    assertThrows("range past the block", IOException.class,
        () -> read(response(0), block.length - 1, 2));
    assertThrows("unaligned first page", IOException.class,
        () -> read(response(0).toBuilder().setFirstPage(1).build(), 1, 1));
  }
}
