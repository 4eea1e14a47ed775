package io.strata.core;

import com.google.protobuf.InvalidProtocolBufferException;
import io.strata.proto.v1.TokenIdentifier;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.Optional;

/**
 * A Strata token: what proves to the namespace service who a client is (docs/security.md). It is
 * {@code "st1." + base64url(identifier) + "." + base64url(password)}, unpadded: the identifier
 * (a {@code strata.v1.TokenIdentifier}) says who the bearer is and until when, the password is
 * the service's HMAC-SHA256 of the identifier's bytes, which only the service can compute. The
 * client reads the identifier (its user names the home directory) and sends the whole token
 * with every call; it cannot check the password.
 */
public final class StrataToken {
  /** The environment variable that holds a token. */
  public static final String ENV = "STRATA_TOKEN";
  /** The environment variable that names a token file. */
  public static final String ENV_FILE = "STRATA_TOKEN_FILE";

  private static final String PREFIX = "st1.";
  private static final int MAX_LEN = 8 << 10;
  private static final int PASSWORD_LEN = 32;

  private final String text;
  private final byte[] identifierBytes;
  private final byte[] password;
  private final TokenIdentifier identifier;

  private StrataToken(String text, byte[] identifierBytes, byte[] password, TokenIdentifier id) {
    this.text = text;
    this.identifierBytes = identifierBytes;
    this.password = password;
    this.identifier = id;
  }

  /** Decodes {@code s}; checks its form only. */
  public static StrataToken parse(String s) {
    String t = s.trim();
    if (t.length() > MAX_LEN || !t.startsWith(PREFIX)) {
      throw new IllegalArgumentException("not a Strata token: it does not start with \"" + PREFIX
          + "\" or is too long");
    }
    String[] parts = t.substring(PREFIX.length()).split("\\.", -1);
    if (parts.length != 2) {
      throw new IllegalArgumentException("not a Strata token: no signature");
    }
    try {
      Base64.Decoder d = Base64.getUrlDecoder();
      return of(d.decode(parts[0]), d.decode(parts[1]));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("not a Strata token: " + e.getMessage(), e);
    }
  }

  /** The token of an identifier's bytes and its password, as Hadoop's Token holds them. */
  public static StrataToken of(byte[] identifierBytes, byte[] password) {
    if (password.length != PASSWORD_LEN) {
      throw new IllegalArgumentException("not a Strata token: the signature is not "
          + PASSWORD_LEN + " bytes");
    }
    TokenIdentifier id;
    try {
      id = TokenIdentifier.parseFrom(identifierBytes);
    } catch (InvalidProtocolBufferException e) {
      throw new IllegalArgumentException("not a Strata token: " + e.getMessage(), e);
    }
    if (id.getUser().isEmpty() || id.getId() == 0) {
      throw new IllegalArgumentException("not a Strata token: it names no user or id");
    }
    Base64.Encoder enc = Base64.getUrlEncoder().withoutPadding();
    String text = PREFIX + enc.encodeToString(identifierBytes) + "." + enc.encodeToString(password);
    return new StrataToken(text, identifierBytes.clone(), password.clone(), id);
  }

  /**
   * Finds a client's token when its configuration names none: {@code $STRATA_TOKEN}, else the
   * content of {@code file} (a setting; null or empty: none), else of {@code $STRATA_TOKEN_FILE},
   * else of {@code ~/.strata/token}. Empty when there is none: the service then refuses every
   * call, saying what to do. A file named explicitly that cannot be read is an error.
   */
  public static Optional<StrataToken> find(String file) throws IOException {
    String env = System.getenv(ENV);
    if (env != null && !env.isBlank()) {
      return Optional.of(parse(env));
    }
    boolean explicit = true;
    if (file == null || file.isEmpty()) {
      file = System.getenv(ENV_FILE);
    }
    if (file == null || file.isEmpty()) {
      file = defaultFile().toString();
      explicit = false;
    }
    return read(Path.of(file), explicit);
  }

  /** Reads the token in {@code file}; a missing file is empty unless {@code mustExist}. */
  public static Optional<StrataToken> read(Path file, boolean mustExist) throws IOException {
    try {
      String s = new String(Files.readAllBytes(file), StandardCharsets.UTF_8).trim();
      if (s.isEmpty()) {
        return Optional.empty();
      }
      try {
        return Optional.of(parse(s));
      } catch (IllegalArgumentException e) {
        throw new IOException("token file " + file + ": " + e.getMessage(), e);
      }
    } catch (NoSuchFileException e) {
      if (mustExist) {
        throw e;
      }
      return Optional.empty();
    }
  }

  /** {@code ~/.strata/token}, where the CLI and {@code strata server --dev} keep a token. */
  public static Path defaultFile() {
    return Path.of(System.getProperty("user.home"), ".strata", "token");
  }

  /** The token as sent: {@code st1.…}. */
  public String text() {
    return text;
  }

  /** The identifier's bytes, as signed. */
  public byte[] identifierBytes() {
    return identifierBytes.clone();
  }

  /** The password: the service's signature of the identifier. */
  public byte[] password() {
    return password.clone();
  }

  public TokenIdentifier identifier() {
    return identifier;
  }

  public String user() {
    return identifier.getUser();
  }

  public List<String> groups() {
    return identifier.getGroupsList();
  }

  @Override
  public String toString() {
    return "StrataToken{id=" + identifier.getId() + ", user=" + identifier.getUser() + "}";
  }
}
