package io.strata.core.worker;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import io.strata.core.rpc.Tls;
import io.strata.proto.v1.ShortCircuitResponse;
import io.strata.proto.v1.WorkerInfo;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.Test;

/**
 * The worker choices of internal/client/testdata/workers.txt, which the Go client makes too
 * (internal/client's TestWorkerChoice; the file's header says how): which workers a read tries
 * and a write is offered to, in which order, and whether the first is read or written
 * short-circuit. A placement changed in one client alone fails the other's test.
 */
public class WorkerChoiceTest {
  /** The shared file, from java/core (the tests' working directory). */
  static final Path FILE = Path.of("..", "..", "internal", "client", "testdata", "workers.txt");

  private List<WorkerInfo> workers = new ArrayList<>();
  private boolean shortCircuit = true;
  /** The socket of "local ID": it proves to be ID ({@link ShortCircuitHello}). */
  private FakeScWorker local;

  @Test
  public void choosesAsTheGoClientDoes() throws IOException {
    try (FakeScWorker fake = new FakeScWorker(r -> ShortCircuitResponse.getDefaultInstance())) {
      local = fake;
      choose();
    }
  }

  private void choose() throws IOException {
    List<String> lines = Files.readAllLines(FILE, StandardCharsets.UTF_8);
    int checked = 0;
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i);
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      String where = FILE.getFileName() + ":" + (i + 1) + ": " + line;
      int arrow = line.indexOf(" ->");
      if (arrow < 0) {
        set(where, Arrays.asList(line.split("\\s+")));
        continue;
      }
      String want = line.substring(arrow + 3).strip();
      assertEquals(where, want, choose(where, line.substring(0, arrow).split("\\s+")));
      checked++;
    }
    assertTrue("only " + checked + " choices in " + FILE, checked >= 10);
  }

  /** "workers ID...", "local ID", "impostor ID" or "short-circuit on|off". */
  private void set(String where, List<String> w) {
    switch (w.get(0)) {
      case "workers" -> {
        workers = new ArrayList<>();
        for (String id : w.subList(1, w.size())) {
          // The key of a worker that would prove itself, were its socket found.
          workers.add(local.as(WorkerInfo.newBuilder().setId(id).setHost("another-host").build())
              .toBuilder().setUnixSocket("/nonexistent/" + id + ".sock").build());
        }
        shortCircuit = true;
      }
      case "local" -> {
        int i = workers.stream().map(WorkerInfo::getId).toList().indexOf(w.get(1));
        assertTrue(where + ": no such worker", i >= 0);
        workers.set(i, local.as(workers.get(i)));
      }
      case "impostor" -> {
        int i = workers.stream().map(WorkerInfo::getId).toList().indexOf(w.get(1));
        assertTrue(where + ": no such worker", i >= 0);
        workers.set(i, local.as(workers.get(i)));
        local.answerAs("someone-else");
      }
      case "short-circuit" -> shortCircuit = w.get(1).equals("on");
      default -> throw new AssertionError(where + ": unknown line");
    }
  }

  /**
   * The client's choice for "read INODE BLOCK" or "write INODE": the workers in order, then "via
   * short-circuit" or "via rpc".
   */
  private String choose(String where, String[] w) {
    try (WorkerSet set = new WorkerSet(null, null, shortCircuit, Duration.ofSeconds(1),
        Tls.plaintext())) {
      List<WorkerInfo> order = switch (w[0]) {
        case "read" -> WorkerSet.rank(workers, Long.parseUnsignedLong(w[1]),
            Long.parseUnsignedLong(w[2]));
        case "write" -> set.writerOrder(workers, Long.parseUnsignedLong(w[1]));
        default -> throw new AssertionError(where + ": unknown line");
      };
      // As WorkerBlockReader reads the first, and WorkerBlockIO writes it.
      boolean sc = w[0].equals("read") ? set.local(order.get(0))
          : set.writesShortCircuit(order.get(0));
      return String.join(" ", order.stream().map(WorkerInfo::getId).toList())
          + (sc ? " via short-circuit" : " via rpc");
    }
  }
}
