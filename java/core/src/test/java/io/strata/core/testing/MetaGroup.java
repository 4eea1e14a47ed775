package io.strata.core.testing;

import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.strata.core.rpc.Channels;
import io.strata.core.rpc.HostPort;
import io.strata.core.rpc.Tls;
import io.strata.proto.v1.MetaServiceGrpc;
import io.strata.proto.v1.StatusRequest;
import io.strata.proto.v1.StatusResponse;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A namespace service of several real {@code strata meta} processes on loopback, one Raft group
 * (the Java twin of internal/testcluster's Group). Member {@code i} (from 1) serves at {@link
 * #address(int)} with its state in its own directory, which survives {@link #kill(int)} so that
 * {@link #startMember(int)} restarts it on its old state. Members' stderr goes to
 * target/strata-logs/meta-*.log. Not safe for concurrent use.
 */
public final class MetaGroup implements AutoCloseable {
  private static final long START_TIMEOUT_SECONDS = 60;
  private static final Duration STATUS_TIMEOUT = Duration.ofSeconds(1);
  private static final Duration POLL = Duration.ofMillis(20);

  private final Path binary;
  private final Path dir;
  private final List<String> addresses;
  private final Process[] members;

  private MetaGroup(Path binary, Path dir, List<String> addresses) {
    this.binary = binary;
    this.dir = dir;
    this.addresses = addresses;
    this.members = new Process[addresses.size()];
  }

  /**
   * Starts a group of {@code n} members and waits until each serves (not until one leads: the
   * first call that needs a leader waits for the election).
   */
  public static MetaGroup launch(int n) throws IOException {
    Path binary = DevCluster.binary();
    MetaGroup g = new MetaGroup(binary, Files.createTempDirectory("strata-group-"), freeAddrs(n));
    DevCluster.registerTokenFile(g.metaAddress(), g::tokenFile);
    try {
      for (int i = 1; i <= n; i++) {
        g.startMember(i);
      }
      return g;
    } catch (IOException | RuntimeException e) {
      g.close();
      throw e;
    }
  }

  /**
   * n loopback addresses that were free a moment ago: the members must know each other's
   * addresses before they start, so a member can lose its port to another process in between.
   */
  private static List<String> freeAddrs(int n) throws IOException {
    List<ServerSocket> held = new ArrayList<>();
    try {
      List<String> out = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        held.add(s);
        out.add("127.0.0.1:" + s.getLocalPort());
      }
      return out;
    } finally {
      for (ServerSocket s : held) {
        s.close();
      }
    }
  }

  /** Every member's address, comma-separated, as clients take them. */
  public String metaAddress() {
    return String.join(",", addresses);
  }

  /** Member {@code id}'s host:port. */
  public String address(int id) {
    return addresses.get(id - 1);
  }

  /** Member {@code id}'s data directory. */
  public Path memberDir(int id) {
    return dir.resolve("m" + id);
  }

  /** Starts (or restarts, on its old state) member {@code id} and waits until it serves. */
  public void startMember(int id) throws IOException {
    if (members[id - 1] != null && members[id - 1].isAlive()) {
      throw new IllegalStateException("member " + id + " is running");
    }
    List<String> initial = new ArrayList<>();
    for (int j = 1; j <= addresses.size(); j++) {
      initial.add(j + "=" + address(j));
    }
    Path logDir = Paths.get("target", "strata-logs");
    Files.createDirectories(logDir);
    Path log = Files.createTempFile(logDir, "meta-" + id + "-", ".log");
    Process p = new ProcessBuilder(binary.toString(), "meta", "--member-id", Integer.toString(id),
        "--listen", address(id), "--data-dir", memberDir(id).toString(),
        "--initial-cluster", String.join(",", initial),
        // Not the default (the gRPC port + 2), which may be another member's port.
        "--http-listen", "127.0.0.1:0")
        .redirectOutput(ProcessBuilder.Redirect.DISCARD)
        .start();
    members[id - 1] = p;
    CompletableFuture<String> ready = new CompletableFuture<>();
    Thread pump = new Thread(() -> DevCluster.pumpStderr(p, log, ready), "strata-meta-" + id);
    pump.setDaemon(true);
    pump.start();
    try {
      ready.get(START_TIMEOUT_SECONDS, TimeUnit.SECONDS);
    } catch (InterruptedException | ExecutionException | TimeoutException e) {
      p.destroyForcibly();
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      throw new IOException("member " + id + " did not start (" + e + "); its log: " + log
          + "\n" + Files.readString(log), e);
    }
  }

  /** Kills member {@code id} with SIGKILL and waits until it is gone. */
  public void kill(int id) throws InterruptedException {
    Process p = members[id - 1];
    if (p != null) {
      p.destroyForcibly();
      p.waitFor();
    }
  }

  /**
   * The file holding the superuser's token that the group's first leader wrote to its data
   * directory (docs/security.md), or empty while no member has led yet.
   */
  public java.util.Optional<Path> tokenFile() {
    for (int id = 1; id <= members.length; id++) {
      Path f = memberDir(id).resolve("token");
      if (Files.isRegularFile(f)) {
        return java.util.Optional.of(f);
      }
    }
    return java.util.Optional.empty();
  }

  /** The superuser's token, waiting for a leader to write it (at most a minute). */
  public String token() throws IOException, InterruptedException {
    long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
    while (System.nanoTime() < deadline) {
      java.util.Optional<Path> f = tokenFile();
      if (f.isPresent()) {
        String t = Files.readString(f.get()).trim();
        if (!t.isEmpty()) {
          return t;
        }
      }
      Thread.sleep(POLL.toMillis());
    }
    throw new IOException("no member of the group wrote a token in a minute");
  }

  /** Member {@code id}'s own answer to the Status RPC (its role, term, indexes). */
  public StatusResponse status(int id) {
    String token = null;
    try {
      java.util.Optional<Path> f = tokenFile();
      token = f.isPresent() ? Files.readString(f.get()).trim() : null;
    } catch (IOException e) {
      // none yet: the member answers UNAUTHENTICATED, and the caller asks again
    }
    ManagedChannel ch = Channels.open(HostPort.parse(address(id)), Tls.plaintext(), token);
    try {
      return MetaServiceGrpc.newBlockingStub(ch)
          .withDeadlineAfter(STATUS_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
          .status(StatusRequest.getDefaultInstance());
    } finally {
      ch.shutdownNow();
    }
  }

  /**
   * The member that says it leads, asking the running members until one does or {@code timeout}
   * passes.
   */
  public int awaitLeader(Duration timeout) throws IOException, InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    List<String> answers = new ArrayList<>();
    do {
      answers.clear();
      for (int id = 1; id <= members.length; id++) {
        if (members[id - 1] == null || !members[id - 1].isAlive()) {
          continue;
        }
        try {
          StatusResponse st = status(id);
          if (st.getRole().equals("StateLeader")) {
            return (int) st.getMemberId();
          }
          answers.add(id + ": " + st.getRole() + " term " + st.getTerm());
        } catch (StatusRuntimeException e) {
          answers.add(id + ": " + e.getStatus());
        }
      }
      Thread.sleep(POLL.toMillis());
    } while (System.nanoTime() < deadline);
    throw new IOException("no member leads after " + timeout + ": " + answers);
  }

  /**
   * Polls member {@code id} until it has applied {@code index} (a commit index seen elsewhere) or
   * {@code timeout} passes; returns its last status.
   */
  public StatusResponse awaitApplied(int id, long index, Duration timeout)
      throws IOException, InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    String last = "no answer";
    do {
      try {
        StatusResponse st = status(id);
        if (st.getAppliedIndex() >= index) {
          return st;
        }
        last = "applied " + st.getAppliedIndex();
      } catch (StatusRuntimeException e) {
        last = e.getStatus().toString();
      }
      Thread.sleep(POLL.toMillis());
    } while (System.nanoTime() < deadline);
    throw new IOException("member " + id + " did not apply index " + index + " within "
        + timeout + ": " + last);
  }

  /**
   * Creates namespace {@code name} with a bucket under the group's directory, through the CLI
   * ({@code strata admin ns create}), as an operator would; the caller is the OS user, whom
   * {@code strata meta} makes its superuser by default.
   */
  public void createNamespace(String name) throws IOException, InterruptedException {
    Path bucket = dir.resolve("bucket-" + name).toAbsolutePath();
    Path out = dir.resolve("ns-create-" + name + ".out");
    token();
    Process p = new ProcessBuilder(binary.toString(), "admin", "ns", "create", name,
        "--store", "file://" + bucket, "--meta", metaAddress(),
        "--token-file", tokenFile().orElseThrow().toString())
        .redirectErrorStream(true)
        .redirectOutput(out.toFile())
        .start();
    boolean exited = p.waitFor(START_TIMEOUT_SECONDS, TimeUnit.SECONDS);
    if (!exited) {
      p.destroyForcibly();
      p.waitFor();
    }
    if (!exited || p.exitValue() != 0) {
      throw new IOException("strata admin ns create " + name + " failed"
          + (exited ? " with status " + p.exitValue() : " to finish") + ": "
          + Files.readString(out));
    }
  }

  /** Kills every member and removes the group's directory. */
  @Override
  public void close() throws IOException {
    boolean interrupted = false;
    for (Process p : members) {
      if (p == null) {
        continue;
      }
      p.destroyForcibly();
      try {
        p.waitFor(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    DevCluster.deleteTree(dir);
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }
}
