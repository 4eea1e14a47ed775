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
 * set, so that the worker fetches it again) and the read is tried once more. The file and its
 * CRCs are kept as the block's lease ({@link Leases}): the worker lends the cached pages past the
 * range asked for, so a reader going on through a block asks once, not at every read. Idle
 * connections are pooled, and so are the direct buffers of short-circuit writes ({@link
 * ShortCircuitBlockWriter}) and reads. Safe for concurrent use.
 *
 * <p>Java cannot receive the descriptor the worker passes, so the cache file is opened by the
 * path the response names; a file evicted meanwhile fails the read, and the caller falls back to
 * the worker's RPC.
 */
final class ShortCircuit implements AutoCloseable {
  /** Idle connections kept per worker socket. */
  static final int MAX_IDLE = 16;

  /**
   * The buffer a short-circuit write gathers bytes in before it writes them to the cache file,
   * and a short-circuit read reads a run of units into. Direct: the JDK would copy a heap buffer
   * into a temporary direct one for each write, or out of one for each read.
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
  private final Leases leases = new Leases();

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
   * {@code ref}, read from the worker's cache file: by the block's lease when one holds the
   * range, else by a new one the worker gives. A unit that fails its CRC ends the lease, and the
   * range is asked for again with {@code invalidate} (the worker drops and fetches it).
   */
  void read(BlockRef ref, byte[] b, int off, int len, long in, boolean random)
      throws IOException {
    Leases.Key k = new Leases.Key(ref.getInodeId(), ref.getBlockId(), ref.getVersion());
    Leases.Lease l = leases.get(k, in, len);
    try {
      if (l != null) {
        readLent(k, l, b, off, len, in);
        return;
      }
      readOnce(k, ref, b, off, len, in, false, random);
    } catch (CorruptPageException e) {
      readOnce(k, ref, b, off, len, in, true, random);
    } finally {
      if (l != null) {
        l.release();
      }
    }
  }

  private void readLent(Leases.Key k, Leases.Lease l, byte[] b, int off, int len, long in)
      throws IOException {
    try {
      readPages(l.file, l.resp, b, off, len, in);
    } catch (CorruptPageException e) {
      leases.drop(k, l);
      throw e;
    }
  }

  private void readOnce(Leases.Key k, BlockRef ref, byte[] b, int off, int len, long in,
      boolean invalidate, boolean random) throws IOException {
    ShortCircuitResponse r = request(ShortCircuitRequest.newBuilder().setBlock(ref)
        .setOffset(in).setLength(len).setInvalidate(invalidate).setRandom(random).setChunks(true)
        .build());
    if (!r.getOk()) {
      throw new IOException("short-circuit read refused: " + r.getError());
    }
    if (r.getPath().isEmpty()) {
      throw new IOException("short-circuit: the worker does not name its cache file");
    }
    Leases.Lease l = new Leases.Lease(FileChannel.open(Path.of(r.getPath()),
        StandardOpenOption.READ), r, System.nanoTime());
    try {
      readPages(l.file, r, b, off, len, in);
    } catch (IOException | RuntimeException e) {
      l.release();
      throw e;
    }
    // NB: installed once it served a read, so that a bad one never replaces a good one.
    leases.put(k, l);
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
   * {@code off}, in one pass: runs of whole units up to {@link #WRITE_BUFFER} bytes are read with
   * one pread into a direct buffer (no copy by the JDK), and each unit is checked and copied out
   * while it is still in the CPU's cache. The lent units before the range (a random reader is
   * lent the block's cached pages before its offset too) are neither read nor checked.
   */
  void readPages(FileChannel f, ShortCircuitResponse r, byte[] b, int off, int len, long in)
      throws IOException {
    ByteBuffer buf = writeBuffer();
    try {
      readPages(f, r, b, off, len, in, buf);
    } finally {
      release(buf);
    }
  }

  /** {@link #readPages} with {@code buf}, a direct buffer, for its runs. */
  static void readPages(FileChannel f, ShortCircuitResponse r, byte[] b, int off, int len,
      long in, ByteBuffer buf) throws IOException {
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
    if (unit > buf.capacity()) {
      buf = ByteBuffer.allocateDirect((int) unit); // a page larger than the pooled buffer
    }
    long unitsEnd = Math.min(Math.floorDiv(end - first + unit - 1, unit) * unit + first,
        blockLength);
    long perRun = buf.capacity() / unit;
    CRC32C crc = new CRC32C();
    long i = (in - first) / unit;
    for (long p = first + i * unit; p < unitsEnd; ) {
      int n = (int) Math.min(perRun * unit, unitsEnd - p);
      buf.clear().limit(n);
      readFully(f, buf, p);
      for (int u = 0; u < n; u += (int) unit, i++) {
        int un = (int) Math.min(unit, n - u);
        if (i >= count) {
          throw new CorruptPageException("short-circuit: no CRC for the cached bytes at "
              + (p + u));
        }
        crc.reset();
        crc.update(buf.limit(u + un).position(u));
        int want = chunks ? r.getChunkCrcs((int) i) : r.getCrcs((int) i);
        if ((int) crc.getValue() != want) {
          throw new CorruptPageException("short-circuit: the cached bytes [" + (p + u) + ", "
              + (p + u + un) + ") of " + r.getPath() + " fail their CRC");
        }
        long from = Math.max(p + u, in);
        long to = Math.min(p + u + un, end);
        buf.get((int) (from - p), b, off + (int) (from - in), (int) (to - from));
      }
      p += n;
    }
  }

  /** Fills {@code buf} from its position to its limit with the file's bytes at {@code pos}. */
  private static void readFully(FileChannel f, ByteBuffer buf, long pos) throws IOException {
    int start = buf.position();
    while (buf.hasRemaining()) {
      int n = f.read(buf, pos + buf.position() - start);
      if (n < 0) {
        // The file is shorter than the pages it should hold: as good as corrupt.
        throw new CorruptPageException("short-circuit: the cache file ends before "
            + (pos + buf.limit() - start));
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
    leases.close();
  }
}
