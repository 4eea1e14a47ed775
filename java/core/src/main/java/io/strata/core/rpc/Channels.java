package io.strata.core.rpc;

import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.NameResolverRegistry;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Opens the channels to the namespace service and to the workers. Every member address goes into one channel whose
 * pick_first policy uses the first that connects; any member serves any request (followers
 * forward proposals to the leader). Plaintext: the service has no TLS yet.
 *
 * <p>NB: gRPC's own transparent retry (of calls that never reached the server) is the only retry
 * in this client; a call that fails after it was sent is reported, never repeated.
 */
public final class Channels {
  /** Largest response accepted, as in the Go client: a page of a listing or inline content. */
  public static final int MAX_INBOUND_MESSAGE_BYTES = 64 << 20;

  /**
   * Largest message accepted from a worker (it sends 1 MiB ones), as in the Go client; the
   * worker accepts messages up to 16 MiB.
   */
  public static final int MAX_WORKER_MESSAGE_BYTES = 16 << 20;

  /**
   * HTTP/2 flow-control window of the worker channels: a read streams up to 16 MiB, and with
   * gRPC's 1 MiB default a loopback RPC read runs at about half the speed (measured).
   */
  static final int WORKER_FLOW_CONTROL_WINDOW = 16 << 20;

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

  /**
   * Opens a channel to the worker at {@code address} (host:port, as it advertises itself);
   * nothing is dialled until the first call.
   */
  public static ManagedChannel openWorker(String address) {
    HostPort hp = HostPort.parse(address);
    return NettyChannelBuilder.forAddress(hp.host(), hp.port(), InsecureChannelCredentials.create())
        .flowControlWindow(WORKER_FLOW_CONTROL_WINDOW)
        .maxInboundMessageSize(MAX_WORKER_MESSAGE_BYTES)
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
