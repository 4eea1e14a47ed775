package io.strata.core.worker;

import io.strata.proto.v1.BlockRef;
import io.strata.proto.v1.ShortCircuitRequest;
import io.strata.proto.v1.ShortCircuitResponse;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.zip.CRC32C;

/**
 * Short-circuit reads from one worker on this host (docs/datapath.md, "Reading"; the Go client's
 * shortcircuit.go): ask the worker over its Unix socket to make a range of a block cached, then
 * read the cache file ourselves, checking the CRC32C of each unit the range touches: each 64 KiB
 * chunk of a page (the cache's chunk size) where the worker lends chunk CRCs, else each page, as
 * the Go client's lease does. A unit that fails its CRC is reported (a request with invalidate
 * set, so that the worker fetches it again) and the read is tried once more. Idle connections are
 * pooled, and so are the buffers of short-circuit writes ({@link ShortCircuitBlockWriter}). Safe
 * for concurrent use.
 *
 * <p>Java cannot receive the descriptor the worker passes, so the cache file is opened by the
 * path the response names; a file evicted meanwhile fails the read, and the caller falls back to
 * the worker's RPC.
 */
final class ShortCircuit implements AutoCloseable {
  /** Idle connections kept per worker socket. */
  static final int MAX_IDLE = 16;

  /**
   * The buffer a short-circuit write gathers bytes in before it writes them to the cache file.
   * Direct: the JDK would copy a heap buffer into a temporary direct one for each write.
   */
  static final int WRITE_BUFFER = 1 << 20;

  /** Idle write buffers kept per worker socket. */
  static final int MAX_IDLE_BUFFERS = 8;

  private final Path socket;
  private final Duration timeout;
  // Guarded by idle.
  private final ArrayDeque<UnixConnection> idle = new ArrayDeque<>();
  private final ArrayDeque<ByteBuffer> buffers = new ArrayDeque<>();
  private boolean closed;

  ShortCircuit(Path socket, Duration timeout) {
    this.socket = socket;
    this.timeout = timeout;
  }

  /** A cached page whose CRC did not match. */
  static final class CorruptPageException extends IOException {
    private static final long serialVersionUID = 1L;

    CorruptPageException(String message) {
      super(message);
    }
  }

  /**
   * Fills {@code len} bytes of {@code b} at {@code off} from {@code [in, in+len)} of block
   * {@code ref}, read from the worker's cache file.
   */
  void read(BlockRef ref, byte[] b, int off, int len, long in, boolean random)
      throws IOException {
    try {
      readOnce(ref, b, off, len, in, false, random);
    } catch (CorruptPageException e) {
      readOnce(ref, b, off, len, in, true, random);
    }
  }

  private void readOnce(BlockRef ref, byte[] b, int off, int len, long in, boolean invalidate,
      boolean random) throws IOException {
    ShortCircuitResponse r = request(ShortCircuitRequest.newBuilder().setBlock(ref)
        .setOffset(in).setLength(len).setInvalidate(invalidate).setRandom(random).setChunks(true)
        .build());
    if (!r.getOk()) {
      throw new IOException("short-circuit read refused: " + r.getError());
    }
    if (r.getPath().isEmpty()) {
      throw new IOException("short-circuit: the worker does not name its cache file");
    }
    try (FileChannel f = FileChannel.open(Path.of(r.getPath()), StandardOpenOption.READ)) {
      readPages(f, r, b, off, len, in);
    }
  }

  /** Sends {@code req} and returns the worker's answer. */
  ShortCircuitResponse request(ShortCircuitRequest req) throws IOException {
    UnixConnection c = take();
    ShortCircuitResponse r;
    try {
      c.send(req);
      r = c.receive(ShortCircuitResponse.parser());
    } catch (IOException | RuntimeException e) {
      c.close();
      throw e;
    }
    give(c);
    return r;
  }

  /**
   * Reads the units (chunks, or pages where the response has no chunk CRCs) covering {@code [in,
   * in+len)} of the block from {@code f}, checks their CRCs and copies the range into {@code b} at
   * {@code off}. Units wholly inside the range are read into {@code b} directly; the lent units
   * before the range (a random reader is lent the block's cached pages before its offset too) are
   * neither read nor checked.
   */
  static void readPages(FileChannel f, ShortCircuitResponse r, byte[] b, int off, int len,
      long in) throws IOException {
    long ps = r.getPageSize();
    long first = r.getFirstPage();
    long blockLength = r.getBlockLength();
    long end = in + len;
    boolean chunks = r.getChunkSize() != 0;
    long unit = chunks ? r.getChunkSize() : ps;
    int count = chunks ? r.getChunkCrcsCount() : r.getCrcsCount();
    if (ps <= 0 || ps > 1 << 30 || unit <= 0 || ps % unit != 0 || first % ps != 0 || first > in
        || end > blockLength) {
      throw new IOException("short-circuit: malformed response (page size " + ps + ", unit "
          + unit + ", first page at " + first + ", block length " + blockLength + ", range " + in
          + "+" + len + ")");
    }
    long unitsEnd = Math.min(Math.floorDiv(end - first + unit - 1, unit) * unit + first,
        blockLength);
    CRC32C crc = new CRC32C();
    byte[] scratch = null;
    long i = (in - first) / unit;
    for (long p = first + i * unit; p < unitsEnd; p += unit, i++) {
      int n = (int) Math.min(unit, blockLength - p);
      if (i >= count) {
        throw new CorruptPageException("short-circuit: no CRC for the cached bytes at " + p);
      }
      boolean inside = p >= in && p + n <= end;
      byte[] dst;
      int at;
      if (inside) {
        dst = b;
        at = off + (int) (p - in);
      } else {
        if (scratch == null) {
          scratch = new byte[(int) unit];
        }
        dst = scratch;
        at = 0;
      }
      readFully(f, dst, at, n, p);
      crc.reset();
      crc.update(dst, at, n);
      int want = chunks ? r.getChunkCrcs((int) i) : r.getCrcs((int) i);
      if ((int) crc.getValue() != want) {
        throw new CorruptPageException("short-circuit: the cached bytes [" + p + ", "
            + (p + n) + ") of " + r.getPath() + " fail their CRC");
      }
      if (!inside) {
        long from = Math.max(p, in);
        long to = Math.min(p + n, end);
        System.arraycopy(scratch, (int) (from - p), b, off + (int) (from - in), (int) (to - from));
      }
    }
  }

  private static void readFully(FileChannel f, byte[] b, int off, int len, long pos)
      throws IOException {
    ByteBuffer buf = ByteBuffer.wrap(b, off, len);
    while (buf.hasRemaining()) {
      int n = f.read(buf, pos + buf.position() - off);
      if (n < 0) {
        // The file is shorter than the pages it should hold: as good as corrupt.
        throw new CorruptPageException("short-circuit: the cache file ends before "
            + (pos + len));
      }
    }
  }

  /**
   * A direct buffer of {@link #WRITE_BUFFER} bytes for a short-circuit write (the pool's, or a
   * new one); {@link #release} it when done.
   */
  ByteBuffer writeBuffer() {
    synchronized (idle) {
      ByteBuffer b = buffers.pollFirst();
      if (b != null) {
        return b.clear();
      }
    }
    return ByteBuffer.allocateDirect(WRITE_BUFFER);
  }

  /** Returns a buffer {@link #writeBuffer} gave to the pool. */
  void release(ByteBuffer b) {
    synchronized (idle) {
      if (!closed && buffers.size() < MAX_IDLE_BUFFERS) {
        buffers.addFirst(b);
      }
    }
  }

  /**
   * A connection of this socket's pool (or a new one), for a request or a conversation of
   * several, such as a short-circuit write's; {@link #give} it back once its last answer is
   * read, or close it.
   */
  UnixConnection take() throws IOException {
    synchronized (idle) {
      UnixConnection c;
      while ((c = idle.pollFirst()) != null) {
        if (!c.stale()) {
          return c;
        }
        c.close();
      }
    }
    return UnixConnection.connect(socket, timeout);
  }

  /** Returns a connection {@link #take} gave, in a state to start a new request, to the pool. */
  void give(UnixConnection c) {
    synchronized (idle) {
      if (!closed && idle.size() < MAX_IDLE) {
        idle.addFirst(c);
        return;
      }
    }
    c.close();
  }

  @Override
  public void close() {
    synchronized (idle) {
      closed = true;
      idle.forEach(UnixConnection::close);
      idle.clear();
      buffers.clear();
    }
  }
}
