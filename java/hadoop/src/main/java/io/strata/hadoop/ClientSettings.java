package io.strata.hadoop;

import io.strata.core.ClientConfig;
import io.strata.core.StrataToken;
import io.strata.core.rpc.Tls;
import java.io.IOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.security.UserGroupInformation;

/** The Hadoop configuration of a {@link StrataFileSystem} made into core's {@link ClientConfig}. */
final class ClientSettings {
  private ClientSettings() {}

  /**
   * The client settings of {@code conf} for the file system of URI {@code name}: the service's
   * address, the token and user, the timeouts, listing, batching, transport, short-circuit and
   * TLS settings
   * ({@link StrataConfigKeys}).
   */
  static ClientConfig of(Configuration conf, URI name) throws IOException {
    String addr = conf.getTrimmed(StrataConfigKeys.META_ADDRESS, "");
    if (addr.isEmpty()) {
      throw new IOException("cannot open " + name + ": " + StrataConfigKeys.META_ADDRESS
          + " is not set (host:port of the Strata namespace service)");
    }
    StrataToken token = StrataTokens.find(conf, addr);
    String user = conf.getTrimmed(StrataConfigKeys.USER, "");
    List<String> groups = new ArrayList<>(conf.getTrimmedStringCollection(
        StrataConfigKeys.GROUPS));
    if (user.isEmpty()) {
      UserGroupInformation ugi = UserGroupInformation.getCurrentUser();
      user = ugi.getShortUserName();
      if (conf.get(StrataConfigKeys.GROUPS) == null) {
        groups = List.of(ugi.getGroupNames());
      }
    }
    try {
      return ClientConfig.builder(addr).user(user).groups(groups).token(token)
          .umask(FsPermission.getUMask(conf).toShort())
          .rpcTimeout(java.time.Duration.ofMillis(conf.getTimeDuration(
              StrataConfigKeys.RPC_TIMEOUT, ClientConfig.DEFAULT_RPC_TIMEOUT.toMillis(),
              TimeUnit.MILLISECONDS)))
          .retryTimeout(java.time.Duration.ofMillis(conf.getTimeDuration(
              StrataConfigKeys.META_RETRY_TIMEOUT,
              ClientConfig.DEFAULT_RETRY_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)))
          .connectTimeout(java.time.Duration.ofMillis(conf.getTimeDuration(
              StrataConfigKeys.META_CONNECT_TIMEOUT,
              ClientConfig.DEFAULT_CONNECT_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)))
          .listPageSize(conf.getInt(StrataConfigKeys.LIST_PAGE_SIZE,
              ClientConfig.DEFAULT_LIST_PAGE_SIZE))
          .listPrefetch(conf.getInt(StrataConfigKeys.LIST_PREFETCH,
              ClientConfig.DEFAULT_LIST_PREFETCH))
          .batchesInFlight(conf.getInt(StrataConfigKeys.META_BATCHES_IN_FLIGHT,
              ClientConfig.DEFAULT_BATCHES_IN_FLIGHT))
          .mutationsInFlight(conf.getInt(StrataConfigKeys.META_MUTATIONS_IN_FLIGHT,
              ClientConfig.DEFAULT_MUTATIONS_IN_FLIGHT))
          .callwire(conf.getBoolean(StrataConfigKeys.META_CALLWIRE,
              StrataConfigKeys.DEFAULT_META_CALLWIRE))
          .shortCircuit(conf.getBoolean(StrataConfigKeys.SHORT_CIRCUIT,
              StrataConfigKeys.DEFAULT_SHORT_CIRCUIT))
          .shortCircuitWrites(conf.getBoolean(StrataConfigKeys.SHORT_CIRCUIT_WRITE,
              StrataConfigKeys.DEFAULT_SHORT_CIRCUIT_WRITE))
          .shortCircuitDir(conf.getTrimmed(StrataConfigKeys.SHORT_CIRCUIT_DIR, ""))
          .tls(tls(conf))
          .build();
    } catch (IllegalArgumentException e) {
      throw new IOException("cannot open " + name + ": " + e.getMessage(), e);
    }
  }

  /** The TLS settings of {@code conf}, where it has any, else the environment's. */
  private static Tls tls(Configuration conf) {
    String plain = conf.getTrimmed(StrataConfigKeys.TLS_PLAINTEXT, "");
    String ca = conf.getTrimmed(StrataConfigKeys.TLS_CA, "");
    if (Boolean.parseBoolean(plain)) {
      return Tls.plaintext();
    }
    if (!ca.isEmpty()) {
      return Tls.withCa(ca);
    }
    return plain.isEmpty() ? Tls.fromEnvironment() : Tls.systemRoots();
  }
}
