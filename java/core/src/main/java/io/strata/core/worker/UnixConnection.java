package io.strata.core.worker;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.MessageLite;
import com.google.protobuf.Parser;
import java.io.EOFException;
import java.io.IOException;
import java.net.SocketTimeoutException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.time.Duration;

/**
 * One connection to a worker's short-circuit Unix socket, speaking its framing (Go's
 * internal/scproto): each message is a uvarint length and a protobuf body, one request answered
 * by one response. Every wait is bounded by the timeout. Not safe for concurrent use.
 *
 * <p>NB: the worker passes its cache file's descriptor along with a response (SCM_RIGHTS). Java
 * reads the socket without a control buffer, so the kernel closes the descriptor it would have
 * installed; the response names the file's path instead.
 */
final class UnixConnection implements AutoCloseable {
  /** Largest message either side sends (scproto.MaxMessage). */
  static final int MAX_MESSAGE = 1 << 20;

  private final SocketChannel channel;
  private final Selector selector;
  private final SelectionKey key;
  private final long timeoutNanos;

  private UnixConnection(SocketChannel channel, Selector selector, Duration timeout)
      throws IOException {
    this.channel = channel;
    this.selector = selector;
    this.key = channel.register(selector, 0);
    this.timeoutNanos = timeout.toNanos();
  }

  /** Connects to the socket at {@code path}. */
  static UnixConnection connect(Path path, Duration timeout) throws IOException {
    SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX);
    Selector sel = null;
    try {
      // A Unix socket connects at once or fails at once.
      ch.connect(UnixDomainSocketAddress.of(path));
      ch.configureBlocking(false);
      sel = Selector.open();
      return new UnixConnection(ch, sel, timeout);
    } catch (IOException | RuntimeException e) {
      ch.close();
      if (sel != null) {
        sel.close();
      }
      throw e;
    }
  }

  /** Sends {@code m}, framed, in one write: the worker reads a message with one read. */
  void send(MessageLite m) throws IOException {
    int size = m.getSerializedSize();
    byte[] frame = new byte[CodedOutputStream.computeUInt32SizeNoTag(size) + size];
    CodedOutputStream out = CodedOutputStream.newInstance(frame);
    out.writeUInt32NoTag(size);
    m.writeTo(out);
    out.checkNoSpaceLeft();
    ByteBuffer buf = ByteBuffer.wrap(frame);
    long deadline = System.nanoTime() + timeoutNanos;
    while (channel.write(buf) == 0) {
      await(SelectionKey.OP_WRITE, deadline);
    }
    if (buf.hasRemaining()) {
      throw new IOException("short-circuit: short write (" + buf.position() + " of "
          + frame.length + " bytes)");
    }
  }

  /** Receives one framed message. */
  <T extends MessageLite> T receive(Parser<T> parser) throws IOException {
    long deadline = System.nanoTime() + timeoutNanos;
    ByteBuffer buf = ByteBuffer.allocate(4096);
    int size = -1;
    int head = 0;
    while (true) {
      if (size < 0) {
        int[] parsed = uvarint(buf);
        if (parsed != null) {
          size = parsed[0];
          head = parsed[1];
          if (size > MAX_MESSAGE) {
            throw new IOException("short-circuit: a " + size + "-byte message is too large");
          }
          if (buf.capacity() < head + size) {
            ByteBuffer bigger = ByteBuffer.allocate(head + size);
            buf.flip();
            bigger.put(buf);
            buf = bigger;
          }
        }
      }
      if (size >= 0 && buf.position() >= head + size) {
        break;
      }
      int n = channel.read(buf);
      if (n < 0) {
        throw new EOFException("short-circuit: the worker closed the connection");
      }
      if (n == 0) {
        await(SelectionKey.OP_READ, deadline);
      }
    }
    if (buf.position() != head + size) {
      throw new IOException("short-circuit: unexpected bytes after a response");
    }
    return parser.parseFrom(buf.array(), head, size);
  }

  /**
   * Reports whether the connection is no use any more: the worker closed it (it restarted) or
   * sent something unasked. Does not block.
   */
  boolean stale() {
    try {
      return channel.read(ByteBuffer.allocate(1)) != 0;
    } catch (IOException e) {
      return true;
    }
  }

  /** Returns {size, header length} of the uvarint at the start of buf, or null if incomplete. */
  private static int[] uvarint(ByteBuffer buf) throws IOException {
    int n = buf.position();
    for (int i = 0; i < Math.min(n, 5); i++) {
      if ((buf.get(i) & 0x80) == 0) {
        int size = CodedInputStream.newInstance(buf.array(), 0, i + 1).readRawVarint32();
        if (size < 0) {
          throw new IOException("short-circuit: malformed message length");
        }
        return new int[] {size, i + 1};
      }
    }
    if (n >= 5) {
      throw new IOException("short-circuit: malformed message length");
    }
    return null;
  }

  private void await(int op, long deadline) throws IOException {
    long left = deadline - System.nanoTime();
    if (left <= 0) {
      throw new SocketTimeoutException("short-circuit: the worker did not answer in "
          + Duration.ofNanos(timeoutNanos).toMillis() + " ms");
    }
    key.interestOps(op);
    try {
      selector.select(Math.max(1, left / 1_000_000));
    } finally {
      selector.selectedKeys().clear();
      key.interestOps(0);
    }
  }

  @Override
  public void close() {
    try {
      selector.close();
    } catch (IOException ignored) {
      // Nothing to do: the channel goes too.
    }
    try {
      channel.close();
    } catch (IOException ignored) {
      // Closing a socket has nothing to report.
    }
  }
}
