package io.strata.core;

import static org.junit.Assert.assertArrayEquals;

import io.strata.core.testing.DevCluster;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import org.junit.Test;

/**
 * A file written for longer than a block access token lives goes on being written: each block
 * opens its stream to the worker with the writer's token, the worker refuses an expired one, and
 * the writer renews a token about to expire before its next block. Here tokens live a second
 * ({@code strata server --block-token-lifetime 1s}), and the writer's third block starts after the
 * token of its create expired.
 */
public class WriterTokenTest {
  private static final long LIFETIME_MS = 1000;
  private static final int BLOCK = 8 << 10; // past the inline limit: the file has blocks

  @Test
  public void aWriterRenewsItsBlockTokenBetweenBlocks() throws Exception {
    try (DevCluster cluster = DevCluster.start(Map.of(),
        List.of("--block-token-lifetime", LIFETIME_MS + "ms"));
        StrataClient client = StrataClient.connect(cluster.clientConfig().build())) {
      StrataPath p = StrataPath.parse("/long");
      byte[] data = DataPathTest.data(3 * BLOCK, 7);
      try (FileWriter w = client.create(p, new CreateOptions(0644, true, true, 0, BLOCK))) {
        long created = System.currentTimeMillis(); // no earlier than the create's token
        w.write(data, 0, 2 * BLOCK); // two blocks' streams
        // The create's token has expired once this passes: what is tested is a write that
        // outlives its token, so the test waits out the lifetime.
        Thread.sleep(Math.max(0, created + LIFETIME_MS + 50 - System.currentTimeMillis()));
        w.write(data, 2 * BLOCK, BLOCK); // the third block's stream
      } catch (IOException e) {
        throw new AssertionError("a block started after the create's token expired: " + e, e);
      }
      assertArrayEquals(data, DataPathTest.read(client, p));
    }
  }
}
