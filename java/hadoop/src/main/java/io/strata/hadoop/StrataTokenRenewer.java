package io.strata.hadoop;

import io.strata.core.ClientConfig;
import io.strata.core.StrataClient;
import io.strata.core.StrataToken;
import java.io.IOException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.security.token.TokenRenewer;

/**
 * Renews and cancels Strata tokens for Hadoop's token framework (YARN's ResourceManager renews
 * a job's tokens while it runs and cancels them after): registered in META-INF/services. The
 * service's address is in the token's service name ({@code strata:HOST:PORT,...}).
 */
public class StrataTokenRenewer extends TokenRenewer {
  @Override
  public boolean handleKind(Text kind) {
    return StrataTokenIdentifier.KIND.equals(kind);
  }

  @Override
  public boolean isManaged(Token<?> token) {
    return true;
  }

  @Override
  public long renew(Token<?> token, Configuration conf) throws IOException {
    try (StrataClient c = clientFor(token)) {
      return c.renewToken(strata(token).text());
    } catch (IOException e) {
      throw HadoopErrors.translate(e);
    }
  }

  @Override
  public void cancel(Token<?> token, Configuration conf) throws IOException {
    try (StrataClient c = clientFor(token)) {
      c.revokeToken(strata(token).text());
    } catch (IOException e) {
      throw HadoopErrors.translate(e);
    }
  }

  private static StrataToken strata(Token<?> token) {
    return StrataToken.of(token.getIdentifier(), token.getPassword());
  }

  private static StrataClient clientFor(Token<?> token) throws IOException {
    String service = token.getService().toString();
    if (!service.startsWith("strata:")) {
      throw new IOException("not a Strata token's service: " + service);
    }
    return StrataClient.connect(ClientConfig.builder(service.substring("strata:".length()))
        .token(strata(token)).build());
  }
}
