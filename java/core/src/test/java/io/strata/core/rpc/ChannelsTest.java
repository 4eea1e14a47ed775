package io.strata.core.rpc;

import static org.junit.Assert.assertEquals;

import io.grpc.ManagedChannel;
import io.strata.core.testing.FakeMember;
import io.strata.proto.v1.FileStatus;
import io.strata.proto.v1.GetFileStatusRequest;
import io.strata.proto.v1.GetFileStatusResponse;
import io.strata.proto.v1.MetaServiceGrpc;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.TimeUnit;
import org.junit.Test;

/**
 * {@link Channels}: a channel to the namespace service sends no HTTP/2 PING of its own while a
 * lone caller calls, seen through a loopback proxy that keeps what the client sends. (gRPC's
 * auto-tuned flow-control window pings after an answer's data when no ping is out and its ping
 * limiter allows: here 1 of the 20 calls.)
 */
public class ChannelsTest {
  /** HTTP/2's client connection preface, before the first frame. */
  private static final int PREFACE_BYTES = 24;

  private static final int PING = 0x6;
  private static final int ACK = 0x1;

  @Test
  public void aLoneCallerSendsNoPings() throws Exception {
    FakeMember member = FakeMember.start();
    member.answer("GetFileStatus", req -> GetFileStatusResponse.newBuilder()
        .setStatus(FileStatus.newBuilder().setName("f")).build());
    HostPort target = HostPort.parse(member.address());
    try (ServerSocket front = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      ByteArrayOutputStream sent = new ByteArrayOutputStream();
      Thread proxy = new Thread(() -> proxy(front, target, sent), "channels-test-proxy");
      proxy.setDaemon(true);
      proxy.start();
      ManagedChannel ch = Channels.open(new HostPort("127.0.0.1", front.getLocalPort()));
      try {
        MetaServiceGrpc.MetaServiceBlockingStub stub = MetaServiceGrpc.newBlockingStub(ch);
        for (int i = 0; i < 20; i++) {
          stub.withDeadlineAfter(30, TimeUnit.SECONDS)
              .getFileStatus(GetFileStatusRequest.newBuilder().setPath("/f").build());
        }
        // NB: a ping that followed answers 1 to 19 left before call 20, which the member
        // answered, so the proxy has it.
        byte[] b;
        synchronized (sent) {
          b = sent.toByteArray();
        }
        assertEquals("PING frames the client sent over 20 calls", 0, pings(b));
      } finally {
        ch.shutdownNow();
        member.close();
      }
    }
  }

  /** Counts the PING frames other than acknowledgements in {@code b}, after the preface. */
  private static int pings(byte[] b) {
    int n = 0;
    for (int at = PREFACE_BYTES; at + 9 <= b.length; ) {
      int length = (b[at] & 0xff) << 16 | (b[at + 1] & 0xff) << 8 | (b[at + 2] & 0xff);
      if (b[at + 3] == PING && (b[at + 4] & ACK) == 0) {
        n++;
      }
      at += 9 + length;
    }
    return n;
  }

  /** Forwards one connection of {@code front} to {@code target}, keeping what the client sent. */
  private static void proxy(ServerSocket front, HostPort target, ByteArrayOutputStream sent) {
    try (Socket client = front.accept();
        Socket member = new Socket(target.host(), target.port())) {
      Thread back = new Thread(() -> copy(member, client, null), "channels-test-proxy-back");
      back.setDaemon(true);
      back.start();
      copy(client, member, sent);
    } catch (IOException e) {
      // The test ended and closed the sockets.
    }
  }

  private static void copy(Socket from, Socket to, ByteArrayOutputStream keep) {
    byte[] buf = new byte[64 << 10];
    try {
      InputStream in = from.getInputStream();
      OutputStream out = to.getOutputStream();
      for (int n; (n = in.read(buf)) >= 0; ) {
        if (keep != null) {
          synchronized (keep) {
            keep.write(buf, 0, n);
          }
        }
        out.write(buf, 0, n);
        out.flush();
      }
    } catch (IOException e) {
      // The test ended and closed the sockets.
    }
  }
}
