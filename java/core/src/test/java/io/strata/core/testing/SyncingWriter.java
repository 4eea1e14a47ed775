package io.strata.core.testing;

import io.strata.core.ClientConfig;
import io.strata.core.CreateOptions;
import io.strata.core.FileWriter;
import io.strata.core.StrataClient;
import io.strata.core.StrataPath;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * A writer in a JVM of its own, for tests that kill it (SIGKILL) after it synced: it creates a
 * file with 1 MiB blocks, writes {@code rounds} rounds of {@code size} bytes ({@link #round}),
 * each followed by hsync, prints "synced N" (N: the bytes synced so far) after each, then waits
 * to be killed. Its stderr goes to target/strata-logs/writer-*.log.
 */
public final class SyncingWriter {
  private SyncingWriter() {}

  /** Round {@code i}'s bytes: what the writer writes, for the test to compare with. */
  public static byte[] round(int i, int size) {
    byte[] b = new byte[size];
    new Random(i * 7919L + 17).nextBytes(b);
    return b;
  }

  /** The process's entry: META PATH SIZE ROUNDS, with the token in $STRATA_TOKEN. */
  public static void main(String[] args) throws IOException, InterruptedException {
    StrataClient c = StrataClient.connect(ClientConfig.builder(args[0])
        .token(io.strata.core.StrataToken.find(null).orElseThrow()).build());
    FileWriter w = c.create(StrataPath.parse(args[1]),
        new CreateOptions(0644, true, true, 0, 1 << 20));
    int size = Integer.parseInt(args[2]);
    long synced = 0;
    for (int i = 0; i < Integer.parseInt(args[3]); i++) {
      w.write(round(i, size), 0, size);
      w.hsync();
      synced += size;
      System.out.println("synced " + synced);
      System.out.flush();
    }
    Thread.sleep(Long.MAX_VALUE); // until killed
  }

  /**
   * Starts the writer process and waits until it said it synced {@code rounds} rounds; returns
   * it, killed by the caller.
   */
  public static Process start(String meta, String token, String path, int size, int rounds)
      throws IOException {
    Path logDir = Paths.get("target", "strata-logs");
    Files.createDirectories(logDir);
    Path log = Files.createTempFile(logDir, "writer-", ".log");
    String cp = System.getProperty("surefire.test.class.path",
        System.getProperty("java.class.path"));
    List<String> cmd = new ArrayList<>(List.of(
        Paths.get(System.getProperty("java.home"), "bin", "java").toString(), "-cp", cp,
        "-D" + DevCluster.BINARY_PROPERTY + "=" + DevCluster.binary(),
        SyncingWriter.class.getName(), meta, path, Integer.toString(size),
        Integer.toString(rounds)));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(log.toFile());
    pb.environment().put(io.strata.core.StrataToken.ENV, token);
    Process p = pb.start();
    BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(),
        StandardCharsets.UTF_8));
    for (int i = 1; i <= rounds; i++) {
      String line = out.readLine();
      if (!("synced " + (long) i * size).equals(line)) {
        p.destroyForcibly();
        throw new IOException("the writer said " + line + " in round " + i + "; its log: "
            + log + "\n" + Files.readString(log));
      }
    }
    return p;
  }
}
