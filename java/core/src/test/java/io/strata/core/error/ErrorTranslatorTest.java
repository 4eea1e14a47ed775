package io.strata.core.error;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import com.google.protobuf.Any;
import com.google.rpc.Code;
import com.google.rpc.ErrorInfo;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.SocketTimeoutException;
import org.junit.Test;

public class ErrorTranslatorTest {
  private final ErrorTranslator t = new ErrorTranslator("127.0.0.1:7700");

  private static StatusRuntimeException status(Code code, String reason, String domain) {
    com.google.rpc.Status st = com.google.rpc.Status.newBuilder().setCode(code.getNumber())
        .setMessage("create /a/b: " + reason)
        .addDetails(Any.pack(ErrorInfo.newBuilder().setReason(reason).setDomain(domain).build()))
        .build();
    return StatusProto.toStatusRuntimeException(st);
  }

  @Test
  public void everyReasonKeepsItsNameAndMessage() {
    for (Reason r : Reason.values()) {
      IOException e = t.translate(status(Code.FAILED_PRECONDITION, r.name(), Reason.DOMAIN),
          Op.CREATE, "/a/b");
      assertTrue(r + " -> " + e, e instanceof StrataError);
      assertEquals(r, ((StrataError) e).reason());
      assertEquals(Op.CREATE, ((StrataError) e).op());
      if (r != Reason.CHANGED) { // says what to do about it: changedObjects
        assertEquals("create /a/b: " + r.name(), e.getMessage());
      }
    }
  }

  /** A worker's CHANGED names the object's key: the exception names the path and what to do. */
  @Test
  public void changedObjects() {
    com.google.rpc.Status st = com.google.rpc.Status.newBuilder()
        .setCode(Code.FAILED_PRECONDITION.getNumber())
        .setMessage("read: t/f.bin changed in the bucket since it was opened (version \"e1\"): "
            + "open it again")
        .addDetails(Any.pack(ErrorInfo.newBuilder().setReason("CHANGED")
            .setDomain(Reason.DOMAIN).build()))
        .build();
    IOException e = ErrorTranslator.forWorker("w-1", "127.0.0.1:1")
        .translate(StatusProto.toStatusRuntimeException(st), Op.READ, "strata://lake/t/f.bin");
    assertTrue(e.toString(), e instanceof ObjectChangedException);
    assertEquals(Reason.CHANGED, ((StrataError) e).reason());
    assertEquals("read strata://lake/t/f.bin: the file changed in the bucket since it was "
        + "opened; open it again (read: t/f.bin changed in the bucket since it was opened "
        + "(version \"e1\"): open it again)", e.getMessage());
  }

  @Test
  public void specificClasses() {
    assertTrue(t.translate(status(Code.NOT_FOUND, "NOT_FOUND", Reason.DOMAIN), Op.OPEN, "/a")
        instanceof FileNotFoundException);
    assertTrue(t.translate(status(Code.NOT_FOUND, "NO_NAMESPACE", Reason.DOMAIN), Op.OPEN, "/a")
        instanceof FileNotFoundException);
    assertTrue(t.translate(status(Code.FAILED_PRECONDITION, "LEASE_CONFLICT", Reason.DOMAIN),
        Op.CREATE, "/a") instanceof AlreadyBeingCreatedException);
    assertTrue(t.translate(status(Code.FAILED_PRECONDITION, "NO_LEASE", Reason.DOMAIN),
        Op.COMPLETE, "/a") instanceof LeaseExpiredException);
  }

  /**
   * A worker's UNAVAILABLE (the bucket unavailable) is temporary, as a service that cannot be
   * reached is: a ServiceUnavailableException that keeps the cause in its message.
   */
  @Test
  public void unavailableIsTemporary() {
    com.google.rpc.Status st = com.google.rpc.Status.newBuilder()
        .setCode(Code.UNAVAILABLE.getNumber())
        .setMessage("the bucket is unavailable: object get \"b/1\": connection refused")
        .addDetails(Any.pack(ErrorInfo.newBuilder().setReason("UNAVAILABLE")
            .setDomain(Reason.DOMAIN).build()))
        .build();
    IOException e = ErrorTranslator.forWorker("w-1", "127.0.0.1:1")
        .translate(StatusProto.toStatusRuntimeException(st), Op.READ, "/f");
    assertTrue(e.toString(), e instanceof UnavailableException);
    assertTrue(e.toString(), e instanceof ServiceUnavailableException);
    assertEquals(Reason.UNAVAILABLE, ((StrataError) e).reason());
    assertTrue(e.getMessage(), e.getMessage().contains("connection refused"));
  }

  @Test
  public void foreignDomainOrUnknownReasonIsNotAnAnswer() {
    IOException e = t.translate(status(Code.NOT_FOUND, "NOT_FOUND", "example.com"), Op.OPEN,
        "/a");
    assertTrue(e.toString(), !(e instanceof StrataError));
    e = t.translate(status(Code.NOT_FOUND, "SOMETHING_NEW", Reason.DOMAIN), Op.OPEN, "/a");
    assertTrue(e.toString(), !(e instanceof StrataError));
  }

  @Test
  public void transportErrors() {
    IOException e = t.translate(Status.UNAVAILABLE.withDescription("connection refused")
        .asRuntimeException(), Op.MKDIRS, "strata://ns/a");
    assertTrue(e instanceof ServiceUnavailableException);
    assertTrue(e.getMessage(), e.getMessage().contains("127.0.0.1:7700"));
    assertTrue(e.getMessage(), e.getMessage().contains("connection refused"));
    assertTrue(t.translate(Status.DEADLINE_EXCEEDED.asRuntimeException(), Op.OPEN, "/a")
        instanceof SocketTimeoutException);
    assertTrue(t.translate(Status.CANCELLED.asRuntimeException(), Op.OPEN, "/a")
        instanceof InterruptedIOException);
    IOException internal = t.translate(Status.INTERNAL.withDescription("disk on fire")
        .asRuntimeException(), Op.OPEN, "/a");
    assertTrue(internal.getMessage(), internal.getMessage().contains("disk on fire"));
  }

  @Test
  public void notLeaderIsRetriedAndNamesTheLeader() {
    com.google.rpc.Status st = com.google.rpc.Status.newBuilder()
        .setCode(Code.UNAVAILABLE.getNumber()).setMessage("not the leader")
        .addDetails(Any.pack(ErrorInfo.newBuilder().setReason("NOT_LEADER")
            .setDomain(Reason.DOMAIN).putMetadata(Reason.LEADER_KEY, "10.0.0.2:7700").build()))
        .build();
    StatusRuntimeException named = StatusProto.toStatusRuntimeException(st);
    assertTrue(ErrorTranslator.retryable(named));
    assertEquals(java.util.Optional.of("10.0.0.2:7700"), ErrorTranslator.leaderOf(named));
    StatusRuntimeException none = status(Code.UNAVAILABLE, "NOT_LEADER", Reason.DOMAIN);
    assertTrue(ErrorTranslator.retryable(none));
    assertEquals(java.util.Optional.empty(), ErrorTranslator.leaderOf(none));
    IOException e = t.translate(none, Op.MKDIRS, "/a");
    assertTrue(e.toString(), e instanceof NotLeaderException);
    assertTrue(e.toString(), e instanceof ServiceUnavailableException);
  }

  @Test
  public void onlyTransportFailuresAndNotLeaderAreRetried() {
    assertTrue(ErrorTranslator.retryable(Status.UNAVAILABLE.asRuntimeException()));
    assertTrue(ErrorTranslator.retryable(Status.DEADLINE_EXCEEDED.asRuntimeException()));
    for (Reason r : Reason.values()) {
      if (r != Reason.NOT_LEADER) {
        assertTrue(r.name(), !ErrorTranslator.retryable(status(Code.UNAVAILABLE, r.name(),
            Reason.DOMAIN)));
      }
    }
    assertTrue(!ErrorTranslator.retryable(status(Code.UNAVAILABLE, "SOMETHING_NEW",
        Reason.DOMAIN)));
    assertTrue(!ErrorTranslator.retryable(Status.CANCELLED.asRuntimeException()));
    assertTrue(!ErrorTranslator.retryable(Status.INTERNAL.asRuntimeException()));
  }
}
