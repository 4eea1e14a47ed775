package io.strata.core;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;

import java.util.Random;
import java.util.zip.CRC32C;
import org.junit.Test;

/** The CRC32C algebra the checksums are combined with, as the Go client's crc32c.Combine. */
public class FileChecksumTest {
  private static int crc(byte[] b, int off, int len) {
    CRC32C c = new CRC32C();
    c.update(b, off, len);
    return (int) c.getValue();
  }

  /** The CRCs of two parts of a buffer, cut anywhere, combine into the whole's. */
  @Test
  public void combineOfTwoPartsIsTheWhole() {
    byte[] data = new byte[70 << 10];
    new Random(3).nextBytes(data);
    for (int cut : new int[] {0, 1, 7, 512, 4096, 64 << 10, data.length - 1, data.length}) {
      int got = FileChecksum.combine(crc(data, 0, cut), crc(data, cut, data.length - cut),
          data.length - cut);
      assertEquals("cut at " + cut, crc(data, 0, data.length), got);
    }
  }

  /** Many parts of different lengths, combined in turn. */
  @Test
  public void combineOfManyParts() {
    byte[] data = new byte[1 << 20];
    new Random(4).nextBytes(data);
    int acc = 0;
    int off = 0;
    Random r = new Random(5);
    while (off < data.length) {
      int n = Math.min(data.length - off, 1 + r.nextInt(100_000));
      acc = FileChecksum.combine(acc, crc(data, off, n), n);
      off += n;
    }
    assertEquals(crc(data, 0, data.length), acc);
  }

  /** Hadoop's getBytes: the CRC big-endian. */
  @Test
  public void bytesAreBigEndian() {
    assertArrayEquals(new byte[] {(byte) 0xca, (byte) 0xfe, 0x12, 0x34},
        new FileChecksum(0xcafe1234, 9).bytes());
  }
}
