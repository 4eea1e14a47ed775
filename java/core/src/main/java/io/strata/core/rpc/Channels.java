package io.strata.core.rpc;

import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.stub.MetadataUtils;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;

/**
 * Opens the channels to the members of the namespace service and to the workers, one channel per
 * address, over TLS or in plaintext as {@link Tls} says.
 *
 * <p>NB: besides gRPC's own transparent retry (of calls that never reached the server), the only
 * retries of metadata calls are {@link MetaCaller}'s.
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

  /**
   * HTTP/2 flow-control window of the channels to the namespace service, fixed: gRPC's default
   * tunes it by pinging the service after an answer's data when no ping is out (as often as its
   * ping limiter lets it: 1 call in 20 of a lone caller in ChannelsTest), each ping an extra
   * frame, system call and wake-up on both sides. The service's answers are small: a listing's
   * page, a batch's results. The service fixes its own windows likewise (the Go metaserver's
   * ServerOptions), where the pings were on every call.
   */
  static final int META_FLOW_CONTROL_WINDOW = 4 << 20;

  private Channels() {}

  /**
   * Opens a plaintext channel to {@code member} of the namespace service (one per member: {@link
   * MetaCaller} picks the member); nothing is dialled until the first call.
   */
  public static ManagedChannel open(HostPort member) {
    return open(member, Tls.plaintext(), null);
  }

  /** As {@link #open(HostPort)}, with {@code tls}. */
  public static ManagedChannel open(HostPort member, Tls tls) {
    return open(member, tls, null);
  }

  /**
   * Opens a channel to {@code member} with {@code tls} whose calls carry {@code token} (null:
   * none) as the metadata {@code authorization: Bearer TOKEN}.
   */
  public static ManagedChannel open(HostPort member, Tls tls, String token) {
    NettyChannelBuilder b = NettyChannelBuilder.forAddress(member.host(), member.port(),
            tls.credentials())
        .flowControlWindow(META_FLOW_CONTROL_WINDOW)
        .maxInboundMessageSize(MAX_INBOUND_MESSAGE_BYTES)
        .userAgent("strata-java");
    if (token != null) {
      Metadata md = new Metadata();
      md.put(AUTHORIZATION, "Bearer " + token);
      b.intercept(MetadataUtils.newAttachHeadersInterceptor(md));
    }
    return b.build();
  }

  /** The metadata key that carries a call's token. */
  static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

  /**
   * Opens a channel to the worker at {@code address} (host:port, as it advertises itself);
   * nothing is dialled until the first call.
   */
  public static ManagedChannel openWorker(String address, Tls tls) {
    HostPort hp = HostPort.parse(address);
    return NettyChannelBuilder.forAddress(hp.host(), hp.port(), tls.credentials())
        .flowControlWindow(WORKER_FLOW_CONTROL_WINDOW)
        .maxInboundMessageSize(MAX_WORKER_MESSAGE_BYTES)
        .userAgent("strata-java")
        .build();
  }
}
