package io.strata.core;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import io.strata.core.rpc.Tls;
import io.strata.core.testing.DevCluster;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.List;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.Parameterized;

/**
 * A strata server --dev with TLS on (its default; the other tests' servers run plaintext): a
 * client with its CA writes and reads a file, through the worker too; one without the CA, or
 * in plaintext, cannot connect. Its metadata calls over callwire (TLS after the preface) and
 * over gRPC.
 */
@RunWith(Parameterized.class)
public class TlsTest {
  /** The transports of the metadata calls: callwire, gRPC. */
  @Parameterized.Parameters(name = "callwire={0}")
  public static List<Object[]> transports() {
    return List.of(new Object[] {true}, new Object[] {false});
  }

  @Parameterized.Parameter
  public boolean callwire;

  private static DevCluster server;

  @BeforeClass
  public static void start() throws IOException {
    server = DevCluster.start(Map.of("STRATA_PLAINTEXT", "0"));
  }

  @AfterClass
  public static void stop() throws IOException {
    server.close();
  }

  /** A client with the default timeouts: a TLS handshake on a busy machine takes a while. */
  private StrataClient client(Tls tls) throws IOException {
    return StrataClient.connect(ClientConfig.builder(server.address()).tls(tls).callwire(callwire)
        .token(StrataToken.parse(server.token())).build());
  }

  /** A client that gives up soon: it is not meant to connect. */
  private StrataClient refused(Tls tls) throws IOException {
    return StrataClient.connect(ClientConfig.builder(server.address()).tls(tls).callwire(callwire)
        .token(StrataToken.parse(server.token())).connectTimeout(Duration.ofSeconds(1)).retryTimeout(Duration.ofSeconds(2))
        .rpcTimeout(Duration.ofSeconds(5)).build());
  }

  @Test
  public void aClientWithTheCaReadsAndWrites() throws IOException {
    try (StrataClient c = client(Tls.withCa(server.dataDir().resolve("tls/ca.pem").toString()))) {
      StrataPath p = StrataPath.parse("/tls-" + System.nanoTime());
      byte[] data = new byte[3 << 20];
      new java.util.Random(7).nextBytes(data);
      try (FileWriter w = c.create(p, CreateOptions.defaults())) {
        w.write(data);
      }
      byte[] got = new byte[data.length];
      try (FileReader r = c.open(p)) {
        int off = 0;
        while (off < got.length) {
          off += r.read(off, got, off, got.length - off);
        }
      }
      assertArrayEquals(data, got);
    }
  }

  /** Each way of failing to connect says why, and what to set. */
  @Test
  public void aClientWithoutTheCaOrInPlaintextCannotConnect() throws IOException {
    Map<Tls, String> want = Map.of(
        Tls.systemRoots(), "its TLS certificate is not signed by a CA this client trusts",
        // callwire's service says so; gRPC's closes the connection, and the client guesses.
        Tls.plaintext(), callwire ? "it speaks TLS and this client connects in plaintext"
            : "it may speak TLS and this client connects in plaintext");
    for (Map.Entry<Tls, String> w : want.entrySet()) {
      try (StrataClient c = refused(w.getKey())) {
        IOException e = assertThrows(IOException.class,
            () -> c.getFileStatus(StrataPath.parse("/")));
        assertTrue(w.getKey() + ": " + e.getMessage(), e.getMessage().contains(w.getValue()));
      }
    }
  }
}
