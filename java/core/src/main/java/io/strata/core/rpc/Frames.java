package io.strata.core.rpc;

import com.google.protobuf.InvalidProtocolBufferException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * callwire's frames (the wire format: internal/callwire/doc.go), in one place: what {@link
 * CallSocket} writes and reads, and what the tests' server ({@code
 * io.strata.core.testing.FakeCallwire}) reads and writes. The frames of
 * internal/callwire/testdata/frames.txt, which the Go tests run too, are encoded and decoded
 * here byte for byte ({@code FramesTest}): a format changed in one language alone fails a test.
 */
public final class Frames {
  /** The first bytes of a plaintext connection. */
  public static final byte[] PREFACE_PLAIN = "STRATA1P".getBytes(StandardCharsets.US_ASCII);

  /** The first bytes of a connection whose TLS handshake follows. */
  public static final byte[] PREFACE_TLS = "STRATA1T".getBytes(StandardCharsets.US_ASCII);

  /**
   * The largest message either way: {@link Channels#MAX_INBOUND_MESSAGE_BYTES}, the Go side's
   * callwire.MaxMessage (frames.txt states both).
   */
  public static final int MAX_MESSAGE = Channels.MAX_INBOUND_MESSAGE_BYTES;

  /** Largest frame after its length, either way: the largest message and a little. */
  public static final int MAX_FRAME = MAX_MESSAGE + 1024;

  /** Response frame kinds. */
  public static final int KIND_MESSAGE = 0;

  public static final int KIND_STATUS = 1;

  /** Bytes of a response frame's head: its length and its kind. */
  public static final int RESPONSE_HEAD = 5;

  private Frames() {}

  /** The hello of a connection whose calls carry {@code token} (null: none). */
  public static byte[] hello(String token) {
    byte[] t = token == null ? new byte[0] : token.getBytes(StandardCharsets.UTF_8);
    byte[] hello = new byte[4 + t.length];
    putInt(hello, 0, t.length);
    System.arraycopy(t, 0, hello, 4, t.length);
    return hello;
  }

  /** The bytes of a request frame's head, method {@code name}, before its message. */
  public static int requestHeadLength(byte[] name) {
    return 4 + 1 + name.length + 8;
  }

  /**
   * Writes into {@code b} at {@code off} the head of a request frame: a call of the method
   * {@code name} (gRPC's full name, with its leading slash), with {@code timeoutNanos} left (0:
   * none), whose message is {@code size} bytes; returns where the message goes.
   */
  public static int putRequestHead(byte[] b, int off, byte[] name, long timeoutNanos,
      int size) {
    putInt(b, off, 1 + name.length + 8 + size);
    b[off + 4] = (byte) name.length;
    System.arraycopy(name, 0, b, off + 5, name.length);
    putLong(b, off + 5 + name.length, timeoutNanos);
    return off + requestHeadLength(name);
  }

  /** The request frame of a call of {@code method} with {@code message}, whole. */
  public static byte[] request(String method, long timeoutNanos, byte[] message) {
    byte[] name = method.getBytes(StandardCharsets.US_ASCII);
    byte[] b = new byte[requestHeadLength(name) + message.length];
    int off = putRequestHead(b, 0, name, timeoutNanos, message.length);
    System.arraycopy(message, 0, b, off, message.length);
    return b;
  }

  /** A decoded request frame. */
  public record Request(String method, long timeoutNanos, byte[] message) {}

  /**
   * Decodes a request frame's bytes after its length; {@link Malformed} if they break the
   * format, as the Go server ends such a connection.
   */
  public static Request parseRequest(byte[] f) throws Malformed {
    if (f.length < 1) {
      throw new Malformed("malformed request: empty", null);
    }
    int m = f[0] & 0xff;
    if (m == 0 || f.length < 1 + m + 8) {
      throw new Malformed("malformed request: " + f.length + " bytes, a method name of " + m,
          null);
    }
    return new Request(new String(f, 1, m, StandardCharsets.US_ASCII), getLong(f, 1 + m),
        Arrays.copyOfRange(f, 1 + m + 8, f.length));
  }

  /** The length a request frame's head (its first 4 bytes) says; Malformed past the limit. */
  public static int requestLength(byte[] head) throws Malformed {
    int n = getInt(head, 0);
    if (n < 0 || n > MAX_FRAME) {
      throw new Malformed("malformed request: a frame of " + Integer.toUnsignedString(n)
          + " bytes", null);
    }
    return n;
  }

  /** The response frame of {@code kind} and {@code body}, whole. */
  public static byte[] response(int kind, byte[] body) {
    byte[] b = new byte[RESPONSE_HEAD + body.length];
    putInt(b, 0, 1 + body.length);
    b[4] = (byte) kind;
    System.arraycopy(body, 0, b, RESPONSE_HEAD, body.length);
    return b;
  }

  /**
   * The length of the body a response frame's head ({@link #RESPONSE_HEAD} bytes) announces;
   * {@link Malformed} for a length or kind that breaks the format.
   */
  public static int responseBodyLength(byte[] head) throws Malformed {
    int n = getInt(head, 0);
    int kind = head[4];
    if (n < 1 || n > MAX_FRAME) {
      throw new Malformed("malformed answer: a frame of " + Integer.toUnsignedString(n)
          + " bytes", null);
    }
    if (kind != KIND_MESSAGE && kind != KIND_STATUS) {
      throw new Malformed("malformed answer: a frame of kind " + kind, null);
    }
    return n - 1;
  }

  /** Decodes the status of a kind 1 body, the first {@code n} bytes of {@code b}. */
  public static com.google.rpc.Status status(byte[] b, int n) throws Malformed {
    try {
      return com.google.rpc.Status.parser().parseFrom(b, 0, n);
    } catch (InvalidProtocolBufferException e) {
      throw new Malformed("malformed answer: a status that does not parse", e);
    }
  }

  static void putInt(byte[] b, int off, int v) {
    b[off] = (byte) (v >>> 24);
    b[off + 1] = (byte) (v >>> 16);
    b[off + 2] = (byte) (v >>> 8);
    b[off + 3] = (byte) v;
  }

  static void putLong(byte[] b, int off, long v) {
    putInt(b, off, (int) (v >>> 32));
    putInt(b, off + 4, (int) v);
  }

  static int getInt(byte[] b, int off) {
    return (b[off] & 0xff) << 24 | (b[off + 1] & 0xff) << 16 | (b[off + 2] & 0xff) << 8
        | (b[off + 3] & 0xff);
  }

  static long getLong(byte[] b, int off) {
    return (long) getInt(b, off) << 32 | (getInt(b, off + 4) & 0xffffffffL);
  }

  /** Bytes that break the format; its message says which, an answer or a request. */
  public static final class Malformed extends IOException {
    private static final long serialVersionUID = 1L;

    Malformed(String message, Throwable cause) {
      super(message, cause);
    }
  }
}
