package io.strata.core.error;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.ErrorInfo;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.SocketTimeoutException;
import java.util.Optional;

/**
 * The one translation of the namespace service's gRPC statuses into Java exceptions (STYLE rule
 * 6). A status with a Strata ErrorInfo becomes a {@link StrataError} carrying its {@link
 * Reason}; transport statuses become {@link ServiceUnavailableException}, {@link
 * SocketTimeoutException} or {@link InterruptedIOException}; anything else a plain IOException.
 * Framework adapters (the Hadoop FileSystem) map {@link StrataError}s further by reason only.
 * The workers' statuses are translated alike ({@link #forWorker}).
 */
public final class ErrorTranslator {
  private final String kind;
  private final String service;

  /**
   * Creates a translator for the namespace service; {@code service} names its address(es) in
   * transport errors.
   */
  public ErrorTranslator(String service) {
    this("namespace service", service);
  }

  private ErrorTranslator(String kind, String service) {
    this.kind = kind;
    this.service = service;
  }

  /** Returns a translator for the statuses of worker {@code id} at {@code address}. */
  public static ErrorTranslator forWorker(String id, String address) {
    return new ErrorTranslator("worker " + id, address);
  }

  /**
   * Returns the exception for {@code e}, which {@code op} on {@code what} (a path, for messages
   * that the service did not write) met.
   */
  public IOException translate(StatusRuntimeException e, Op op, String what) {
    Optional<Reason> reason = reasonOf(e);
    String message = e.getStatus().getDescription();
    if (reason.isPresent()) {
      return forReason(reason.get(), op, what, message == null ? what : message, e);
    }
    return forTransport(e, op, what);
  }

  /** Returns the exception for a service-reported condition. */
  public static IOException forReason(Reason reason, Op op, String path, String message,
      Throwable cause) {
    switch (reason) {
      case NOT_FOUND:
      case NO_NAMESPACE:
        return new StrataFileNotFoundException(reason, op, path, message, cause);
      case LEASE_CONFLICT:
        return new AlreadyBeingCreatedException(op, path, message, cause);
      case NO_LEASE:
        return new LeaseExpiredException(op, path, message, cause);
      default:
        return new StrataException(reason, op, path, message, cause);
    }
  }

  private IOException forTransport(StatusRuntimeException e, Op op, String what) {
    Status st = e.getStatus();
    String desc = st.getDescription() == null ? "" : ": " + st.getDescription();
    String verb = op.name().toLowerCase(java.util.Locale.ROOT);
    switch (st.getCode()) {
      case UNAVAILABLE:
        return new ServiceUnavailableException(
            verb + " " + what + ": cannot reach the Strata " + kind + " at " + service + desc,
            e);
      case DEADLINE_EXCEEDED:
        SocketTimeoutException t = new SocketTimeoutException(
            verb + " " + what + ": the Strata " + kind + " at " + service
                + " did not answer in time" + desc);
        t.initCause(e);
        return t;
      case CANCELLED:
        InterruptedIOException i = new InterruptedIOException(verb + " " + what + ": cancelled"
            + desc);
        i.initCause(e);
        return i;
      default:
        return new IOException(
            verb + " " + what + ": Strata " + kind + " at " + service + " error " + st.getCode()
                + desc, e);
    }
  }

  /** Returns the Strata reason carried by {@code e}, if any. */
  static Optional<Reason> reasonOf(StatusRuntimeException e) {
    com.google.rpc.Status st = StatusProto.fromThrowable(e);
    if (st == null) {
      return Optional.empty();
    }
    for (Any detail : st.getDetailsList()) {
      if (!detail.is(ErrorInfo.class)) {
        continue;
      }
      try {
        ErrorInfo info = detail.unpack(ErrorInfo.class);
        if (Reason.DOMAIN.equals(info.getDomain())) {
          return Reason.parse(info.getReason());
        }
      } catch (InvalidProtocolBufferException ignored) {
        // A malformed detail is no reason: fall through to the status code.
      }
    }
    return Optional.empty();
  }
}
