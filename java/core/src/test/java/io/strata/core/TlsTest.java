package io.strata.core;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import io.strata.core.rpc.Tls;
import io.strata.core.testing.DevCluster;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;

/**
 * A strata server --dev with TLS on (its default; the other tests' servers run plaintext): a
 * client with its CA writes and reads a file, through the worker too; one without the CA, or
 * in plaintext, cannot connect.
 */
public class TlsTest {
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
  private static StrataClient client(Tls tls) throws IOException {
    return StrataClient.connect(ClientConfig.builder(server.address()).tls(tls)
        .token(StrataToken.parse(server.token())).build());
  }

  /** A client that gives up soon: it is not meant to connect. */
  private static StrataClient refused(Tls tls) throws IOException {
    return StrataClient.connect(ClientConfig.builder(server.address()).tls(tls)
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
        Tls.plaintext(), "it may speak TLS and this client connects in plaintext");
    for (Map.Entry<Tls, String> w : want.entrySet()) {
      try (StrataClient c = refused(w.getKey())) {
        IOException e = assertThrows(IOException.class,
            () -> c.getFileStatus(StrataPath.parse("/")));
        assertTrue(w.getKey() + ": " + e.getMessage(), e.getMessage().contains(w.getValue()));
      }
    }
  }
}
