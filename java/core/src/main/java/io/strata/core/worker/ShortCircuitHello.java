package io.strata.core.worker;

import com.google.protobuf.ByteString;
import io.strata.proto.v1.ShortCircuitRequest;
import io.strata.proto.v1.ShortCircuitResponse;
import io.strata.proto.v1.WorkerInfo;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.spec.X509EncodedKeySpec;

/**
 * The short-circuit hello (the Go client's scfind.go, internal/scproto's hello.go): which worker's
 * socket a client may use goes by proof, not by host name. A client in a container has a host name
 * (and a network) of its own, and would never match its worker's, while two workers on one
 * machine, or a path shared into a container, may put another worker's socket at the path a
 * worker registered. So the client sends the socket a nonce and uses it only if the worker that
 * answers has the id the service lists and signs the nonce with the Ed25519 key the service lists
 * for it ({@code WorkerInfo.sc_key}).
 */
final class ShortCircuitHello {
  /** What the worker signs before the nonce, so that the signature is good for nothing else. */
  private static final byte[] CONTEXT = "strata-sc-hello\0".getBytes(StandardCharsets.US_ASCII);

  /** The X.509 SubjectPublicKeyInfo prefix of a raw 32-byte Ed25519 public key. */
  private static final byte[] X509_PREFIX = {0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70,
      0x03, 0x21, 0x00};

  /** Why not, for a socket the client cannot see: a worker elsewhere, or not shared with it. */
  static final String NO_SOCKET = "no socket there";

  private static final SecureRandom RANDOM = new SecureRandom();

  private ShortCircuitHello() {}

  /**
   * Says hello through {@code sc}, the client of the socket at {@code path}, and returns null if
   * the worker behind it proves to be {@code w}, else why not ({@link #NO_SOCKET} if there is no
   * socket). The connection then joins {@code sc}'s pool.
   */
  static String prove(ShortCircuit sc, Path path, WorkerInfo w) {
    if (!Files.exists(path)) {
      return NO_SOCKET;
    }
    byte[] nonce = new byte[32];
    RANDOM.nextBytes(nonce);
    ShortCircuitResponse r;
    try {
      r = sc.request(ShortCircuitRequest.newBuilder().setHello(ByteString.copyFrom(nonce))
          .build());
    } catch (IOException e) {
      return String.valueOf(e.getMessage());
    }
    if (!r.getOk()) {
      return "its worker refused the hello: " + r.getError() + " (a worker older than this client?)";
    }
    if (!r.getWorkerId().equals(w.getId())) {
      return "the socket there is worker " + r.getWorkerId() + "'s";
    }
    return check(w.getScKey().toByteArray(), nonce, r.getHelloSignature().toByteArray());
  }

  /** Returns null if {@code sig} is the signature of {@code nonce} by {@code pub}, else why not. */
  static String check(byte[] pub, byte[] nonce, byte[] sig) {
    if (pub.length != 32) {
      return "the namespace service lists no short-circuit key for it (a worker older than this "
          + "client)";
    }
    byte[] encoded = new byte[X509_PREFIX.length + pub.length];
    System.arraycopy(X509_PREFIX, 0, encoded, 0, X509_PREFIX.length);
    System.arraycopy(pub, 0, encoded, X509_PREFIX.length, pub.length);
    try {
      PublicKey key = KeyFactory.getInstance("Ed25519")
          .generatePublic(new X509EncodedKeySpec(encoded));
      Signature s = Signature.getInstance("Ed25519");
      s.initVerify(key);
      s.update(CONTEXT);
      s.update(nonce);
      return s.verify(sig) ? null : "its signature does not check with the worker's key";
    } catch (GeneralSecurityException e) {
      return "its signature does not check with the worker's key (" + e.getMessage() + ")";
    }
  }
}
