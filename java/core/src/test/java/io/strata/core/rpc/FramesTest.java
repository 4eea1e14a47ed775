package io.strata.core.rpc;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.fail;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.Message;
import com.google.protobuf.TextFormat;
import com.google.protobuf.TypeRegistry;
import com.google.rpc.ErrorInfo;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.Parameterized;

/**
 * The frames of internal/callwire/testdata/frames.txt, which the Go tests run too (its header
 * says how): each description encoded by {@link Frames} must be the case's bytes, and the bytes
 * decoded must be the description; the malformed ones are refused. A frame format changed in Go
 * alone (the file rewritten by Go's {@code -update}) or in Java alone fails here.
 */
@RunWith(Parameterized.class)
public class FramesTest {
  /** The shared file, from java/core (the tests' working directory). */
  static final Path FILE = Path.of("..", "..", "internal", "callwire", "testdata", "frames.txt");

  private static final TypeRegistry DETAILS =
      TypeRegistry.newBuilder().add(ErrorInfo.getDescriptor()).build();

  /** One case of the file: its kind, name, description and bytes. */
  record Case(String kind, String name, Map<String, String> keys, byte[] bytes) {
    @Override
    public String toString() {
      return kind + "/" + name;
    }
  }

  /** Every case of the file. */
  @Parameterized.Parameters(name = "{0}")
  public static List<Object[]> cases() throws IOException {
    List<Object[]> out = new ArrayList<>();
    for (Case c : read(Files.readAllLines(FILE, StandardCharsets.UTF_8))) {
      out.add(new Object[] {c});
    }
    if (out.size() < 10) {
      throw new AssertionError("only " + out.size() + " cases in " + FILE);
    }
    return out;
  }

  @Parameterized.Parameter
  public Case c;

  @Test
  public void encodesAndDecodesAsGoDoes() throws Exception {
    switch (c.kind()) {
      case "limits" -> {
        assertEquals(Integer.parseInt(c.keys().get("max_message")), Frames.MAX_MESSAGE);
        assertEquals(Integer.parseInt(c.keys().get("max_frame")), Frames.MAX_FRAME);
      }
      case "hello" -> hello();
      case "request" -> request();
      case "response" -> response();
      case "bad-request" -> assertThrows(Frames.Malformed.class, this::decodeRequest);
      case "bad-response" -> assertThrows(Frames.Malformed.class, this::decodeResponse);
      default -> fail("a case of an unknown kind: " + c);
    }
  }

  private void hello() {
    String preface = c.keys().get("preface");
    byte[] p = switch (preface) {
      case "STRATA1P" -> Frames.PREFACE_PLAIN;
      case "STRATA1T" -> Frames.PREFACE_TLS;
      default -> throw new AssertionError("preface " + preface);
    };
    String token = c.keys().get("token");
    byte[] hello = Frames.hello(token.isEmpty() ? null : token);
    assertHex(concat(p, hello), c.bytes());
    // Decoded as the tests' server reads it: the preface, a length, the token.
    ByteBuffer b = ByteBuffer.wrap(c.bytes());
    byte[] got = new byte[8];
    b.get(got);
    assertEquals(preface, new String(got, StandardCharsets.US_ASCII));
    byte[] t = new byte[b.getInt()];
    b.get(t);
    assertEquals(token, new String(t, StandardCharsets.UTF_8));
    assertEquals(0, b.remaining());
  }

  private void request() throws Exception {
    Message m = message();
    long timeout = Long.parseLong(c.keys().get("timeout_ns"));
    assertHex(Frames.request(c.keys().get("method"), timeout, m.toByteArray()), c.bytes());
    Frames.Request r = decodeRequest();
    assertEquals(c.keys().get("method"), r.method());
    assertEquals(timeout, r.timeoutNanos());
    assertEquals(m, m.getParserForType().parseFrom(r.message()));
  }

  /** Decodes the case's bytes as a request frame, as the tests' server does. */
  private Frames.Request decodeRequest() throws Frames.Malformed {
    int n = Frames.requestLength(c.bytes());
    if (n != c.bytes().length - 4) {
      throw new Frames.Malformed("a frame of " + n + " bytes holding " + c.bytes().length, null);
    }
    return Frames.parseRequest(Arrays.copyOfRange(c.bytes(), 4, c.bytes().length));
  }

  private void response() throws Exception {
    Message m = message();
    int kind = switch (c.keys().get("kind")) {
      case "message" -> Frames.KIND_MESSAGE;
      case "status" -> Frames.KIND_STATUS;
      default -> throw new AssertionError("kind " + c.keys().get("kind"));
    };
    assertHex(Frames.response(kind, m.toByteArray()), c.bytes());
    byte[] body = decodeResponse();
    assertEquals(kind, c.bytes()[4]);
    if (kind == Frames.KIND_STATUS) {
      assertEquals(m, Frames.status(body, body.length));
    } else {
      assertEquals(m, m.getParserForType().parseFrom(body));
    }
  }

  /** Decodes the case's bytes as a response frame, as {@link CallSocket} does; its body. */
  private byte[] decodeResponse() throws Frames.Malformed {
    byte[] b = c.bytes();
    if (b.length < Frames.RESPONSE_HEAD) {
      throw new Frames.Malformed("a short head", null);
    }
    int n = Frames.responseBodyLength(b);
    if (n != b.length - Frames.RESPONSE_HEAD) {
      throw new Frames.Malformed("a body of " + n + " bytes, " + b.length + " in all", null);
    }
    byte[] body = Arrays.copyOfRange(b, Frames.RESPONSE_HEAD, b.length);
    if (b[4] == Frames.KIND_STATUS) {
      Frames.status(body, body.length);
    }
    return body;
  }

  /** The case's message: "TYPE TEXT", a full name and protobuf's text format. */
  private Message message() throws TextFormat.ParseException {
    String[] m = c.keys().get("message").split(" ", 2);
    if (m[0].equals("google.rpc.Status")) {
      com.google.rpc.Status.Builder b = com.google.rpc.Status.newBuilder();
      parser().merge(m.length > 1 ? m[1] : "", b);
      return b.build();
    }
    Descriptor d = io.strata.proto.v1.Meta.getDescriptor()
        .findMessageTypeByName(m[0].substring("strata.v1.".length()));
    if (d == null) {
      throw new AssertionError("no message " + m[0]);
    }
    DynamicMessage.Builder b = DynamicMessage.newBuilder(d);
    parser().merge(m.length > 1 ? m[1] : "", b);
    return b.build();
  }

  private static TextFormat.Parser parser() {
    return TextFormat.Parser.newBuilder().setTypeRegistry(DETAILS).build();
  }

  private void assertHex(byte[] encoded, byte[] file) {
    HexFormat h = HexFormat.of();
    assertEquals("Java encodes " + c + " otherwise than the file", h.formatHex(file),
        h.formatHex(encoded));
    assertArrayEquals(file, encoded);
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] out = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  /**
   * Parses the file (its grammar: its header): "KIND NAME", "key value" lines, "----", hex
   * lines; a blank line ends a case.
   */
  static List<Case> read(List<String> lines) {
    List<Case> out = new ArrayList<>();
    String[] head = null;
    Map<String, String> keys = new HashMap<>();
    StringBuilder hex = null;
    for (String line : lines) {
      if (head == null && (line.isEmpty() || line.startsWith("#"))) {
        continue;
      }
      if (line.isEmpty()) {
        out.add(new Case(head[0], head[1], keys, HexFormat.of().parseHex(hex)));
        head = null;
        keys = new HashMap<>();
        hex = null;
      } else if (head == null) {
        head = line.split(" ", 2);
      } else if (line.equals("----")) {
        hex = new StringBuilder();
      } else if (hex != null) {
        hex.append(line.replaceAll("\\s", ""));
      } else {
        String[] kv = line.split(" ", 2);
        keys.put(kv[0], kv.length > 1 ? kv[1] : "");
      }
    }
    if (head != null) {
      out.add(new Case(head[0], head[1], keys, HexFormat.of().parseHex(hex)));
    }
    return out;
  }
}
