package io.strata.core;

import static org.junit.Assert.assertEquals;

import io.strata.core.error.Reason;
import io.strata.core.error.ServiceUnavailableException;
import io.strata.core.error.StrataError;
import io.strata.core.testing.FakeMember;
import io.strata.core.testing.ScriptedMembers;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.After;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.Parameterized;

/**
 * The failover, retry and batching scripts of internal/client/testdata/scripts (the language:
 * its README), which the Go client runs too (internal/client's TestScripts), each over callwire
 * and over gRPC, against fake members ({@link ScriptedMembers}). A behaviour changed in one
 * client and not the other fails the other's run, or this one.
 */
@RunWith(Parameterized.class)
public class ScriptTest {
  /** The scripts, from java/core (the tests' working directory). */
  static final Path DIR = Path.of("..", "..", "internal", "client", "testdata", "scripts");

  /** Every script, over each transport. */
  @Parameterized.Parameters(name = "{0} callwire={1}")
  public static List<Object[]> scripts() throws IOException {
    List<Object[]> out = new ArrayList<>();
    try (Stream<Path> files = Files.list(DIR)) {
      for (Path f : files.filter(p -> p.toString().endsWith(".txt")).sorted().toList()) {
        String name = f.getFileName().toString().replaceFirst("\\.txt$", "");
        out.add(new Object[] {name, true});
        out.add(new Object[] {name, false});
      }
    }
    if (out.isEmpty()) {
      throw new AssertionError("no scripts in " + DIR);
    }
    return out;
  }

  @Parameterized.Parameter
  public String script;

  @Parameterized.Parameter(1)
  public boolean callwire;

  private final ScriptedMembers members = new ScriptedMembers();
  private final Map<String, CompletableFuture<String>> calls = new HashMap<>();
  private StrataClient client;

  @After
  public void tearDown() throws IOException {
    members.close();
    if (client != null) {
      client.close();
    }
  }

  @Test
  public void runs() throws Exception {
    List<String> lines = Files.readAllLines(DIR.resolve(script + ".txt"), StandardCharsets.UTF_8);
    for (int i = 0; i < lines.size(); i++) {
      String text = lines.get(i).replaceFirst("#.*", "").strip();
      if (text.isEmpty()) {
        continue;
      }
      try {
        step(Arrays.asList(text.split("\\s+")));
      } catch (Exception | AssertionError e) {
        throw new AssertionError(script + ".txt:" + (i + 1) + ": " + text + ": " + e.getMessage(),
            e);
      }
    }
    members.unchecked();
  }

  /** Carries out one line. */
  private void step(List<String> w) throws Exception {
    switch (w.get(0)) {
      case "members" -> members.start(w.subList(1, w.size()));
      case "workers" -> members.startWorkers(w.subList(1, w.size()));
      case "client" -> client(w.subList(1, w.size()));
      case "call" -> {
        members.unchecked();
        int arrow = arrow(w);
        assertEquals("the call's outcome", w.get(arrow + 1), call(w.subList(1, arrow)));
      }
      case "go" -> {
        if (w.size() < 3 || calls.containsKey(w.get(1))) {
          throw new IllegalArgumentException("want go NAME CALL, NAME new");
        }
        List<String> call = w.subList(2, w.size());
        calls.put(w.get(1), CompletableFuture.supplyAsync(() -> call(call), ScriptTest::thread));
      }
      case "wait" -> await(w.subList(1, w.size()));
      default -> members.run(w);
    }
  }

  /** Each background call on a thread of its own, as the Go runner's goroutines. */
  private static void thread(Runnable r) {
    Thread t = new Thread(r, "script-call");
    t.setDaemon(true);
    t.start();
  }

  /** "client m1 m2 [inflight=N]". */
  private void client(List<String> w) {
    List<String> addresses = new ArrayList<>();
    Integer inflight = null;
    for (String a : w) {
      if (a.startsWith("inflight=")) {
        inflight = Integer.parseInt(a.substring("inflight=".length()));
        continue;
      }
      FakeMember m = members.member(a);
      if (m == null) {
        throw new IllegalArgumentException("no member " + a);
      }
      addresses.add(m.address());
    }
    ClientConfig.Builder b = ClientConfig.builder(String.join(",", addresses)).user("alice")
        .rpcTimeout(Duration.ofSeconds(20)).retryTimeout(Duration.ofSeconds(20))
        .callwire(callwire);
    if (inflight != null) {
      b.batchesInFlight(inflight).mutationsInFlight(inflight);
    }
    client = StrataClient.connect(b.build());
  }

  /** "wait NAME -> OUTCOME", "wait queued reads|mutations N", "wait m1 tried N". */
  private void await(List<String> w) throws Exception {
    if (w.size() == 3 && w.get(0).equals("queued")) {
      client.awaitQueued(w.get(1).equals("reads"), Integer.parseInt(w.get(2)),
          Duration.ofNanos(ScriptedMembers.BOUND_NANOS));
    } else if (members.member(w.get(0)) != null) {
      members.run(w);
    } else {
      int arrow = arrow(w);
      CompletableFuture<String> c = calls.get(w.get(0));
      if (arrow != 1 || c == null) {
        throw new IllegalArgumentException("want wait NAME -> OUTCOME, NAME a call started");
      }
      assertEquals("the outcome of " + w.get(0), w.get(2),
          c.get(2 * ScriptedMembers.BOUND_NANOS, TimeUnit.NANOSECONDS));
    }
  }

  private static int arrow(List<String> w) {
    int i = w.indexOf("->");
    if (i < 0 || i != w.size() - 2) {
      throw new IllegalArgumentException("want ... -> OUTCOME");
    }
    return i;
  }

  /**
   * Makes a call: "stat P", "mkdirs P", "delete P", "rename S D", "read P" (open, and read it
   * whole); returns its outcome.
   */
  private String call(List<String> w) {
    try {
      switch (w.get(0) + "/" + w.size()) {
        case "stat/2" -> client.getFileStatus(StrataPath.parse(w.get(1)));
        case "mkdirs/2" -> client.mkdirs(StrataPath.parse(w.get(1)), 0755, true);
        case "delete/2" -> client.delete(StrataPath.parse(w.get(1)), false);
        case "rename/3" -> client.rename(StrataPath.parse(w.get(1)), StrataPath.parse(w.get(2)),
            false, false);
        case "read/2" -> readWhole(StrataPath.parse(w.get(1)));
        default -> {
          return "unknown call " + w;
        }
      }
      return "ok";
    } catch (IOException e) {
      return outcome(e);
    }
  }

  /** Reads {@code p} from its start to its end, in the reads the reader makes of it. */
  private void readWhole(StrataPath p) throws IOException {
    try (FileReader r = client.open(p)) {
      byte[] b = new byte[(int) r.length()];
      for (int off = 0; off < b.length; ) {
        int n = r.read(off, b, off, b.length - off);
        if (n < 0) {
          throw new java.io.EOFException("read " + p + ": " + off + " of " + b.length + " bytes");
        }
        off += n;
      }
    }
  }

  /** Names {@code e} as the scripts do: NOT_FOUND, ALREADY_EXISTS, UNAVAILABLE, or itself. */
  private static String outcome(IOException e) {
    if (e instanceof StrataError s && (s.reason() == Reason.NOT_FOUND
        || s.reason() == Reason.ALREADY_EXISTS)) {
      return s.reason().name();
    }
    if (e instanceof ServiceUnavailableException) {
      return "UNAVAILABLE";
    }
    return "error(" + e + ")";
  }
}
