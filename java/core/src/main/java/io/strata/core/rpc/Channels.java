package io.strata.core.rpc;

import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.NameResolverRegistry;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Opens the channel to the namespace service. Every member address goes into one channel whose
 * pick_first policy uses the first that connects; any member serves any request (followers
 * forward proposals to the leader). Plaintext: the service has no TLS yet.
 *
 * <p>NB: gRPC's own transparent retry (of calls that never reached the server) is the only retry
 * in this client; a call that fails after it was sent is reported, never repeated.
 */
public final class Channels {
  /** Largest response accepted, as in the Go client: a page of a listing or inline content. */
  public static final int MAX_INBOUND_MESSAGE_BYTES = 64 << 20;

  private static final Object REGISTER_LOCK = new Object();
  private static boolean registered;

  private Channels() {}

  /** Opens a channel to {@code members}; nothing is dialled until the first call. */
  public static ManagedChannel open(List<HostPort> members) {
    if (members.isEmpty()) {
      throw new IllegalArgumentException("no namespace service address");
    }
    registerResolver();
    String target = StaticAddressResolverProvider.SCHEME + ":///"
        + members.stream().map(HostPort::toString).collect(Collectors.joining(","));
    return Grpc.newChannelBuilder(target, InsecureChannelCredentials.create())
        .defaultLoadBalancingPolicy("pick_first")
        .maxInboundMessageSize(MAX_INBOUND_MESSAGE_BYTES)
        .userAgent("strata-java")
        .build();
  }

  private static void registerResolver() {
    synchronized (REGISTER_LOCK) {
      if (!registered) {
        NameResolverRegistry.getDefaultRegistry().register(new StaticAddressResolverProvider());
        registered = true;
      }
    }
  }
}
