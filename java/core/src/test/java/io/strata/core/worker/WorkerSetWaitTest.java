package io.strata.core.worker;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import io.strata.core.error.DataPathUnavailableException;
import io.strata.core.error.Op;
import io.strata.core.error.Reason;
import io.strata.core.error.ServiceUnavailableException;
import io.strata.proto.v1.WorkerInfo;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.Test;

/**
 * A worker lookup across a failover: a leader that knows of no worker yet is asked again, and no
 * live worker at all is a temporary condition, never an unsupported operation.
 */
public class WorkerSetWaitTest {
  private static final WorkerInfo W = WorkerInfo.newBuilder().setId("w-1")
      .setAddress("127.0.0.1:1").build();

  @Test
  public void anEmptyListIsAskedForAgain() throws IOException {
    AtomicInteger asked = new AtomicInteger();
    WorkerBlockIO.Directory dir = () -> asked.incrementAndGet() <= 2 ? List.of() : List.of(W);
    try (WorkerSet ws = new WorkerSet(dir, null, false, Duration.ofSeconds(5))) {
      assertEquals(List.of(W), ws.live(Op.WRITE, "/f", false));
      assertEquals(3, asked.get());
    }
  }

  @Test
  public void noLiveWorkersIsUnavailable() throws IOException {
    AtomicInteger asked = new AtomicInteger();
    WorkerBlockIO.Directory dir = () -> {
      asked.incrementAndGet();
      return List.of();
    };
    try (WorkerSet ws = new WorkerSet(dir, null, false, Duration.ofSeconds(5))) {
      DataPathUnavailableException e = assertThrows(DataPathUnavailableException.class,
          () -> ws.live(Op.READ, "/f", false));
      assertTrue(e.getMessage(), e.getMessage().contains("no live workers"));
      assertTrue(e instanceof ServiceUnavailableException);
      assertEquals(Reason.UNAVAILABLE, e.reason());
      assertTrue("asked " + asked.get() + " times", asked.get() > 1);
    }
  }
}
