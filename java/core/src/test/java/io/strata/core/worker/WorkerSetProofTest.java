package io.strata.core.worker;

import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import io.strata.core.rpc.Tls;
import io.strata.proto.v1.ShortCircuitResponse;
import io.strata.proto.v1.WorkerInfo;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import org.junit.Test;

/**
 * A worker is local when the worker behind the socket the client finds proves to be it, whatever
 * the host names (the Go client's TestLocalWorker): a socket that answers as another worker, or
 * signs with another key, is not the worker's; a short-circuit directory is where the client
 * looks for the sockets by name.
 */
public class WorkerSetProofTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(2);

  private static WorkerSet set(java.nio.file.Path scDir) {
    return new WorkerSet(List::of, scDir, true, true, TIMEOUT, Tls.plaintext());
  }

  @Test
  public void aWorkerIsLocalByProofNotHostName() throws IOException {
    try (FakeScWorker fake = new FakeScWorker(r -> ShortCircuitResponse.getDefaultInstance());
        FakeScWorker other = new FakeScWorker(r -> ShortCircuitResponse.getDefaultInstance());
        WorkerSet ws = set(null)) {
      WorkerInfo here = fake.as(WorkerInfo.newBuilder().setId("w-here").setHost("elsewhere")
          .build());
      assertTrue("a worker whose socket proves it, on a host of another name", ws.local(here));

      WorkerInfo otherKey = other.as(WorkerInfo.newBuilder().setId("w-other").build());
      assertFalse("a socket that is another worker's", ws.local(here.toBuilder().setId("w-2")
          .build()));
      assertFalse("a socket whose worker signs with another key", ws.local(here.toBuilder()
          .setId("w-3").setScKey(otherKey.getScKey()).build()));
      assertFalse("no socket", ws.local(here.toBuilder().setId("w-4")
          .setUnixSocket(fake.dir().resolve("none.sock").toString()).build()));
      assertFalse("no key listed (a worker older than the client)", ws.local(here.toBuilder()
          .setId("w-here").clearScKey().build()));
    }
  }

  @Test
  public void socketsAreFoundInTheShortCircuitDirectory() throws IOException {
    try (FakeScWorker fake = new FakeScWorker(r -> ShortCircuitResponse.getDefaultInstance())) {
      // The worker made its socket on the node; the client's container sees it elsewhere.
      WorkerInfo w = fake.as(WorkerInfo.newBuilder().setId("w-1").build()).toBuilder()
          .setUnixSocket("/var/lib/strata/worker/" + fake.socket().getFileName()).build();
      try (WorkerSet ws = set(null)) {
        assertFalse("a worker whose socket is not at its path", ws.local(w));
      }
      try (WorkerSet ws = set(fake.dir())) {
        assertTrue("a worker whose socket is in the short-circuit directory", ws.local(w));
      }
      try (WorkerSet ws = new WorkerSet(List::of, fake.dir(), false, TIMEOUT)) {
        assertFalse("local with short-circuit off", ws.local(w));
      }
    }
  }
}
