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
 * The workers' statuses are translated alike ({@link #forWorker}). It also tells the retry layer
 * ({@link io.strata.core.rpc.MetaCaller}) which statuses may be sent again ({@link #retryable})
 * and where ({@link #leaderOf}), and words the failure of a call that ran out of retries ({@link
 * #gaveUp}).
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

  /**
   * Returns the exception for a call that no member answered before its retry deadline: {@code
   * last} is the status of its last attempt, {@code tried} names the members tried and how each
   * failed last. Unlike {@link #translate}, the message names every member tried.
   */
  public IOException gaveUp(StatusRuntimeException last, Op op, String what, String tried) {
    String verb = verb(op);
    if (isNotLeader(last)) {
      return new NotLeaderException(op, what, verb + " " + what + ": found no leader of the "
          + "Strata " + kind + "; tried " + tried, last);
    }
    if (last.getStatus().getCode() == Status.Code.DEADLINE_EXCEEDED) {
      SocketTimeoutException t = new SocketTimeoutException(verb + " " + what + ": the Strata "
          + kind + " did not answer in time; tried " + tried);
      t.initCause(last);
      return t;
    }
    return new ServiceUnavailableException(
        verb + " " + what + ": cannot reach the Strata " + kind + " at " + tried, last);
  }

  /**
   * Whether the call that met {@code e} may be sent again, to the leader {@link #leaderOf} names
   * or to another member: true for NOT_LEADER and for transport failures (UNAVAILABLE or
   * DEADLINE_EXCEEDED without a Strata ErrorInfo), false for every answer of the service and
   * for the caller's own cancellation.
   */
  public static boolean retryable(StatusRuntimeException e) {
    if (strataInfo(e).isPresent()) {
      return isNotLeader(e);
    }
    Status.Code c = e.getStatus().getCode();
    // A call started on a connection that is closing (its member just died)
    // fails while writing its headers, before anything was sent; grpc-java
    // reports it as UNKNOWN with a ClosedChannelException (grpc-java #10120).
    return c == Status.Code.UNAVAILABLE || c == Status.Code.DEADLINE_EXCEEDED
        || (c == Status.Code.UNKNOWN
            && e.getStatus().getCause() instanceof java.nio.channels.ClosedChannelException);
  }

  /**
   * The leader's host:port that a NOT_LEADER status names; empty for any other status, and for
   * a member that knows of no leader (an election is under way).
   */
  public static Optional<String> leaderOf(StatusRuntimeException e) {
    return strataInfo(e)
        .filter(i -> Reason.parse(i.getReason()).orElse(null) == Reason.NOT_LEADER)
        .map(i -> i.getMetadataOrDefault(Reason.LEADER_KEY, ""))
        .filter(l -> !l.isEmpty());
  }

  /**
   * A few words on why one attempt failed, for the message of {@link #gaveUp}: "not the leader
   * (it names h:p)", "no answer in time", or the transport's own words ("Connection refused").
   */
  public static String outcome(StatusRuntimeException e) {
    Status st = e.getStatus();
    if (isNotLeader(e)) {
      return leaderOf(e).map(l -> "not the leader, which it says is " + l)
          .orElse("not the leader, and it knows of none");
    }
    if (st.getCode() == Status.Code.DEADLINE_EXCEEDED) {
      return "no answer in time";
    }
    String tls = tlsOutcome(e);
    if (tls != null) {
      return tls;
    }
    Throwable cause = st.getCause();
    if (cause != null && cause.getMessage() != null) {
      // Netty's "finishConnect(..) failed: Connection refused: /127.0.0.1:1": the address is
      // named already, and the rest is the transport's plumbing.
      return cause.getMessage().replaceFirst("^finishConnect\\(\\.\\.\\) failed: ", "")
          .replaceFirst(": /[^ ]*$", "");
    }
    return st.getDescription() != null ? st.getDescription() : st.getCode().toString();
  }

  /**
   * Says what a failed TLS setting looks like from the client, in the words of the Go client's
   * (internal/client diagnoseTLS), with the Java client's settings; null if {@code e} is not
   * one. A plaintext client's first call to a TLS server fails with "Network closed for unknown
   * reason" (the server drops what is not a TLS handshake), which other failures may give too:
   * hence "may". Over callwire the service says it (a status "... serves TLS ..."), and a TLS
   * client of a plaintext service meets the JDK's "Unsupported or unrecognized SSL message".
   */
  static String tlsOutcome(StatusRuntimeException e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      String name = t.getClass().getSimpleName();
      String msg = String.valueOf(t.getMessage());
      if (name.equals("NotSslRecordException")
          || (t instanceof javax.net.ssl.SSLException
              && msg.contains("Unsupported or unrecognized SSL message"))) {
        return "it does not speak TLS (a server started with --plaintext): connect in plaintext "
            + "with fs.strata.tls.plaintext=true or STRATA_PLAINTEXT=1";
      }
      if (name.equals("CertPathBuilderException") || name.equals("SunCertPathBuilderException")
          || msg.contains("unable to find valid certification path")) {
        return "its TLS certificate is not signed by a CA this client trusts: give the cluster's "
            + "CA with fs.strata.tls.ca or $STRATA_TLS_CA (the dev server's is "
            + "DATA-DIR/tls/ca.pem)";
      }
      if (name.equals("CertificateException") && msg.contains("No subject alternative")) {
        return "its TLS certificate is not for this address: " + msg;
      }
    }
    String desc = String.valueOf(e.getStatus().getDescription());
    if (e.getStatus().getCode() == Status.Code.UNAVAILABLE && desc.contains(" serves TLS")) {
      // callwire's answer to a plaintext preface on a TLS service: it says so.
      return "it speaks TLS and this client connects in plaintext: leave out "
          + "fs.strata.tls.plaintext and $STRATA_PLAINTEXT, and give the cluster's CA with "
          + "fs.strata.tls.ca or $STRATA_TLS_CA (" + desc + ")";
    }
    if (e.getStatus().getCode() == Status.Code.UNAVAILABLE
        && "Network closed for unknown reason".equals(desc)) {
      return "it closed the connection at once: it may speak TLS and this client connects in "
          + "plaintext; if so, leave out fs.strata.tls.plaintext and $STRATA_PLAINTEXT, and give "
          + "the cluster's CA with fs.strata.tls.ca or $STRATA_TLS_CA";
    }
    return null;
  }

  /** Whether {@code e} is a member's answer that it is not the leader. */
  public static boolean isNotLeader(StatusRuntimeException e) {
    return reasonOf(e).orElse(null) == Reason.NOT_LEADER;
  }

  private static String verb(Op op) {
    return op.name().toLowerCase(java.util.Locale.ROOT);
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
      case NOT_LEADER:
        return new NotLeaderException(op, path, message, cause);
      case CHANGED:
        return new ObjectChangedException(op, path, message, cause);
      case UNAVAILABLE:
        return new UnavailableException(op, path, message, cause);
      case NS_QUOTA_EXCEEDED:
      case DS_QUOTA_EXCEEDED:
        return new QuotaExceededException(reason, op, path, message, cause);
      case INVALID_ACL:
        return new AclException(op, path, message, cause);
      default:
        return new StrataException(reason, op, path, message, cause);
    }
  }

  private IOException forTransport(StatusRuntimeException e, Op op, String what) {
    Status st = e.getStatus();
    String tls = tlsOutcome(e);
    String desc = tls != null ? ": " + tls : st.getDescription() == null ? ""
        : ": " + st.getDescription();
    String verb = verb(op);
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
    return strataInfo(e).flatMap(i -> Reason.parse(i.getReason()));
  }

  /** Returns the ErrorInfo of domain {@value Reason#DOMAIN} that {@code e} carries, if any. */
  private static Optional<ErrorInfo> strataInfo(StatusRuntimeException e) {
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
          return Optional.of(info);
        }
      } catch (InvalidProtocolBufferException ignored) {
        // A malformed detail is no reason: fall through to the status code.
      }
    }
    return Optional.empty();
  }
}
