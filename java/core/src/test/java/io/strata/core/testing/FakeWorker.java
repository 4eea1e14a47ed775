package io.strata.core.testing;

import com.google.protobuf.ByteString;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.strata.proto.v1.ReadRequest;
import io.strata.proto.v1.ReadResponse;
import io.strata.proto.v1.WorkerInfo;
import io.strata.proto.v1.WorkerServiceGrpc;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A stand-in for a cache worker in the client scripts (internal/client/testdata/scripts): it
 * serves {@code WorkerService.Read} (a block's bytes, zeros) over gRPC on loopback, tells {@code
 * onRead} of each read, and can refuse connections (its server stopped) and come back on the
 * same port; internal/client/clienttest's worker is its Go twin. Safe for concurrent use.
 */
public final class FakeWorker implements AutoCloseable {
  private final String id;
  private final Consumer<ReadRequest> onRead;
  private final int port;

  private final Object mu = new Object();
  // Guarded by mu; null while refusing.
  private Server server;

  private FakeWorker(String id, Consumer<ReadRequest> onRead) throws IOException {
    this.id = id;
    this.onRead = onRead;
    synchronized (mu) {
      server = serve(0);
      port = server.getPort();
    }
  }

  /** Starts the worker {@code id}, telling {@code onRead} of each read. */
  public static FakeWorker start(String id, Consumer<ReadRequest> onRead) throws IOException {
    return new FakeWorker(id, onRead);
  }

  private Server serve(int p) throws IOException {
    return NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", p))
        .addService(new WorkerServiceGrpc.WorkerServiceImplBase() {
          @Override
          public void read(ReadRequest req, StreamObserver<ReadResponse> out) {
            onRead.accept(req);
            out.onNext(ReadResponse.newBuilder()
                .setData(ByteString.copyFrom(new byte[(int) req.getLength()])).build());
            out.onCompleted();
          }
        }).build().start();
  }

  /** The worker as the service lists it: on another host, so that it is read through its RPC. */
  public WorkerInfo info() {
    return WorkerInfo.newBuilder().setId(id).setAddress("127.0.0.1:" + port)
        .setHost("another-host").build();
  }

  /** Stops serving: connections to its port are refused, until {@link #up}. */
  public void refuse() throws InterruptedException {
    synchronized (mu) {
      if (server != null) {
        server.shutdownNow();
        server.awaitTermination(10, TimeUnit.SECONDS);
        server = null;
      }
    }
  }

  /** Serves again, on the same port. */
  public void up() throws IOException {
    synchronized (mu) {
      if (server == null) {
        server = serve(port);
      }
    }
  }

  /** Stops serving for good; an interrupt is left set on the thread. */
  @Override
  public void close() {
    try {
      refuse();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
