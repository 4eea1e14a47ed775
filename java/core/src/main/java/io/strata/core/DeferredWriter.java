package io.strata.core;

import io.strata.core.error.Reason;
import io.strata.core.error.StrataException;
import java.io.IOException;
import java.io.OutputStream;
import java.util.Arrays;
import java.util.Objects;

/**
 * A new file of a block-mode namespace whose create is sent when it is first needed ({@link
 * StrataClient#createDeferred}): a file closed with no more than the inline limit written, and
 * never flushed, is created closed, with its content, in one call at close (a Create with {@code
 * complete}, as the Go client's WriteFile makes it): one RPC and one Raft entry instead of a
 * Create and a Complete. A write past the inline limit, or an {@link #hflush} or {@link #hsync},
 * sends the create then, and the rest goes through a {@link FileWriter} as for any file.
 *
 * <p>NB: until then the file does not exist: other clients do not see it, and no lease is taken,
 * so failures the create would have met (a missing permission, a parent that is a file, a file
 * created meanwhile under an {@code overwrite=false} create) surface at close. {@link
 * StrataClient#createDeferred} checks for an existing file before it returns one of these, so
 * that a create over a file that is there fails at create as it would at once.
 *
 * <p>Methods are synchronized, as {@link FileWriter}'s are.
 */
final class DeferredWriter extends OutputStream implements FileOutput {
  private static final byte[] EMPTY = new byte[0];

  private final StrataClient client;
  private final StrataPath path;
  private final CreateOptions opts;
  private final int inlineLimit;
  private final byte[] one = new byte[1];
  /** What was written while the create waits. */
  private byte[] buf = EMPTY;
  private int count;
  /** The writer the create returned, once it was sent. */
  private FileWriter writer;
  private boolean closed;

  DeferredWriter(StrataClient client, StrataPath path, CreateOptions opts, int inlineLimit) {
    this.client = client;
    this.path = path;
    this.opts = opts;
    this.inlineLimit = inlineLimit;
  }

  @Override
  public StrataPath path() {
    return path;
  }

  @Override
  public synchronized long length() {
    return writer != null ? writer.length() : count;
  }

  @Override
  public synchronized void write(int b) throws IOException {
    one[0] = (byte) b;
    write(one, 0, 1);
  }

  @Override
  public synchronized void write(byte[] b, int off, int len) throws IOException {
    Objects.checkFromIndexSize(off, len, b.length);
    if (writer == null && !closed && (long) count + len <= inlineLimit) {
      if (count + len > buf.length) {
        buf = Arrays.copyOf(buf, Math.max(count + len, Math.min(Math.max(256, 2 * buf.length),
            inlineLimit)));
      }
      System.arraycopy(b, off, buf, count, len);
      count += len;
      return;
    }
    created("write").write(b, off, len);
  }

  @Override
  public synchronized void flush() throws IOException {
    if (writer != null) {
      writer.flush();
    } else if (closed) {
      throw new IOException("flush " + path + ": stream is closed");
    }
  }

  /** Sends the create now, then flushes: the file is visible from then on. */
  @Override
  public void hflush() throws IOException {
    created("flush").hflush();
  }

  @Override
  public void hsync() throws IOException {
    created("flush").hsync();
  }

  /** Always: only block-mode files are deferred. */
  @Override
  public boolean canSync() {
    return true;
  }

  /**
   * Creates the file closed with what was written, or closes the writer the create returned.
   * Idempotent.
   */
  @Override
  public synchronized void close() throws IOException {
    if (closed) {
      return;
    }
    closed = true;
    if (writer != null) {
      writer.close();
      return;
    }
    try {
      client.createClosed(path, opts, buf, count);
    } catch (StrataException e) {
      if (count == 0 || e.reason() != Reason.INVALID_ARGUMENT) {
        throw e;
      }
      // The service's inline limit went down since it was stated: write it as any file.
      try (FileWriter w = client.create(path, opts)) {
        w.write(buf, 0, count);
      }
    } finally {
      buf = null;
    }
  }

  /**
   * The writer of the file, created now if it was not; it is given what was written so far.
   * NB: FileWriter's own lock orders its flushes; this one is held only while the create is made.
   */
  private synchronized FileWriter created(String op) throws IOException {
    if (closed) {
      throw new IOException(op + " " + path + ": stream is closed");
    }
    if (writer == null) {
      FileWriter w = client.create(path, opts);
      w.write(buf, 0, count);
      buf = null;
      writer = w;
    }
    return writer;
  }

  @Override
  public String toString() {
    return "DeferredWriter{" + path + "}";
  }
}
