package io.strata.hadoop;

import io.strata.core.StrataToken;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Optional;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.Token;

/** Where the Hadoop client finds its Strata token, and its form as a Hadoop token. */
final class StrataTokens {
  private StrataTokens() {}

  /** The service name of the Strata cluster at {@code addr} (fs.strata.meta.address). */
  static String serviceName(String addr) {
    return "strata:" + addr;
  }

  /**
   * The client's token (see {@link StrataConfigKeys#TOKEN} for the order), or null when none is
   * found: the service then refuses every call, saying what to do.
   */
  static StrataToken find(Configuration conf, String addr) throws IOException {
    String t = conf.getTrimmed(StrataConfigKeys.TOKEN, "");
    if (!t.isEmpty()) {
      return parse(t, StrataConfigKeys.TOKEN);
    }
    Text service = new Text(serviceName(addr));
    for (Token<?> tok : UserGroupInformation.getCurrentUser().getCredentials().getAllTokens()) {
      if (StrataTokenIdentifier.KIND.equals(tok.getKind()) && service.equals(tok.getService())) {
        return StrataToken.of(tok.getIdentifier(), tok.getPassword());
      }
    }
    String file = conf.getTrimmed(StrataConfigKeys.TOKEN_FILE, "");
    Optional<StrataToken> found = file.isEmpty() ? StrataToken.find(null)
        : StrataToken.read(Path.of(file), true);
    return found.orElse(null);
  }

  private static StrataToken parse(String t, String key) throws IOException {
    try {
      return StrataToken.parse(t);
    } catch (IllegalArgumentException e) {
      throw new IOException(key + ": " + e.getMessage(), e);
    }
  }

  /** {@code t} as a Hadoop token of service {@code service}. */
  static Token<StrataTokenIdentifier> toHadoop(StrataToken t, String service) {
    return new Token<>(t.identifierBytes(), t.password(), StrataTokenIdentifier.KIND,
        new Text(service));
  }
}
