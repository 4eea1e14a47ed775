package io.strata.core;

/**
 * A file's checksum in HDFS's {@code COMPOSITE_CRC} form: the CRC32C (Castagnoli) of its whole
 * content, whatever its blocks and chunks, so that a file in Strata and one in HDFS (with {@code
 * dfs.checksum.combine.mode=COMPOSITE_CRC}) holding the same bytes have equal checksums
 * (docs/semantics.md, "Checksums"). The Go client's {@code client.FileChecksum}.
 *
 * @param crc32c the CRC32C of the bytes
 * @param length how many bytes it covers (the file's length, or the prefix asked for)
 */
public record FileChecksum(int crc32c, long length) {
  /** The form's name, as Hadoop's {@code CompositeCrcFileChecksum} of CRC32C gives it. */
  public static final String ALGORITHM = "COMPOSITE-CRC32C";

  /** The reversed Castagnoli polynomial, as {@link java.util.zip.CRC32C} computes with. */
  private static final int POLY = 0x82F63B78;

  /** {@code X_POW_2N[i]} is x^(2^i) modulo the polynomial; x^(2^32) is x^(2^0) there. */
  private static final int[] X_POW_2N = new int[32];

  static {
    X_POW_2N[0] = 1 << 30; // x^1, the top bit being x^0
    for (int i = 1; i < 32; i++) {
      X_POW_2N[i] = multModP(X_POW_2N[i - 1], X_POW_2N[i - 1]);
    }
  }

  /** The checksum as Hadoop's {@code getBytes} gives it: the CRC, big-endian. */
  public byte[] bytes() {
    return new byte[] {(byte) (crc32c >>> 24), (byte) (crc32c >>> 16), (byte) (crc32c >>> 8),
        (byte) crc32c};
  }

  /**
   * Returns the CRC32C of A followed by B, given {@code crcA} = CRC32C(A), {@code crcB} =
   * CRC32C(B) and {@code lengthB} = B's length (zlib's {@code crc32_combine}, as the Go
   * client's {@code crc32c.Combine}).
   */
  public static int combine(int crcA, int crcB, long lengthB) {
    return multModP(xPowN(8 * lengthB), crcA) ^ crcB;
  }

  /** a*b modulo the polynomial, bit-reversed (the top bit is x^0). */
  private static int multModP(int a, int b) {
    int p = 0;
    for (int m = 1 << 31; m != 0; m >>>= 1) {
      if ((a & m) != 0) {
        p ^= b;
      }
      b = (b & 1) != 0 ? (b >>> 1) ^ POLY : b >>> 1;
    }
    return p;
  }

  /** x^n modulo the polynomial, n taken unsigned. */
  private static int xPowN(long n) {
    int p = 1 << 31; // x^0
    for (int k = 0; n != 0; n >>>= 1, k++) {
      if ((n & 1) != 0) {
        p = multModP(X_POW_2N[k % 32], p);
      }
    }
    return p;
  }
}
