package io.strata.core.rpc;

import io.grpc.ChannelCredentials;
import io.grpc.InsecureChannelCredentials;
import io.grpc.TlsChannelCredentials;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.util.Map;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManagerFactory;

/**
 * How the client connects to the namespace service and the workers: TLS (the default), checking
 * their certificates against a CA bundle or the JVM's trusted roots, or plaintext when asked for
 * (docs/security.md).
 */
public final class Tls {
  /** Where {@code strata server --dev} keeps its CA, under its default data directory. */
  public static final String DEV_CA = "strata-data/tls/ca.pem";

  private final boolean plaintext;
  private final String caFile; // null: the JVM's trusted roots
  private volatile SSLSocketFactory sockets; // made at first use

  private Tls(boolean plaintext, String caFile) {
    this.plaintext = plaintext;
    this.caFile = caFile;
  }

  /** No TLS. */
  public static Tls plaintext() {
    return new Tls(true, null);
  }

  /** TLS, checking servers against the PEM CA bundle {@code caFile}. */
  public static Tls withCa(String caFile) {
    return new Tls(false, caFile);
  }

  /** TLS, checking servers against the JVM's trusted roots. */
  public static Tls systemRoots() {
    return new Tls(false, null);
  }

  /**
   * The environment's settings: plaintext if STRATA_PLAINTEXT is 1 or true, else TLS with the CA
   * STRATA_TLS_CA names, else ./{@value #DEV_CA} if it exists, else the JVM's roots.
   */
  public static Tls fromEnvironment() {
    return from(System.getenv());
  }

  static Tls from(Map<String, String> env) {
    String plain = env.getOrDefault("STRATA_PLAINTEXT", "");
    if (plain.equals("1") || plain.equalsIgnoreCase("true")) {
      return plaintext();
    }
    String ca = env.getOrDefault("STRATA_TLS_CA", "");
    if (!ca.isEmpty()) {
      return withCa(ca);
    }
    return Files.exists(Path.of(DEV_CA)) ? withCa(DEV_CA) : systemRoots();
  }

  /** Whether connections are in plaintext. */
  public boolean isPlaintext() {
    return plaintext;
  }

  /** The channel credentials of these settings. */
  ChannelCredentials credentials() {
    if (plaintext) {
      return InsecureChannelCredentials.create();
    }
    if (caFile == null) {
      return TlsChannelCredentials.create();
    }
    try {
      return TlsChannelCredentials.newBuilder().trustManager(new File(caFile)).build();
    } catch (IOException e) {
      throw new UncheckedIOException("TLS CA " + caFile + ": " + e.getMessage(), e);
    }
  }

  /**
   * The factory of the TLS sockets of these settings (callwire's, {@link CallSocket}): it checks
   * servers against the CA file, or the JVM's trusted roots, as {@link #credentials} does.
   */
  SSLSocketFactory socketFactory() {
    SSLSocketFactory f = sockets;
    if (f == null) {
      f = sockets = sslContext().getSocketFactory();
    }
    return f;
  }

  private SSLContext sslContext() {
    try {
      if (caFile == null) {
        return SSLContext.getDefault();
      }
      KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
      ks.load(null, null);
      try (InputStream in = Files.newInputStream(Path.of(caFile))) {
        int i = 0;
        for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
          ks.setCertificateEntry("ca-" + i++, c);
        }
        if (i == 0) {
          throw new CertificateException("no certificate in it");
        }
      }
      TrustManagerFactory tmf =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(ks);
      SSLContext ctx = SSLContext.getInstance("TLS");
      ctx.init(null, tmf.getTrustManagers(), null);
      return ctx;
    } catch (IOException e) {
      throw new UncheckedIOException("TLS CA " + caFile + ": " + e.getMessage(), e);
    } catch (GeneralSecurityException e) {
      throw new UncheckedIOException("TLS CA " + caFile + ": " + e.getMessage(),
          new IOException(e));
    }
  }

  @Override
  public String toString() {
    return plaintext ? "plaintext" : caFile == null ? "TLS (system roots)" : "TLS (CA " + caFile + ")";
  }
}
