package io.strata.core.worker;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * Rendezvous (highest random weight) placement of blocks on workers, identical to the Go side's
 * {@code blocks.Rank} (internal/blocks): the score of worker {@code w} for block {@code b} of
 * inode {@code i} is XXH64 (seed 0) of w's id in UTF-8 followed by i and b as 8-byte big-endian
 * numbers; the block's home is the worker with the highest score, compared unsigned, and ties
 * keep the input order. Every client ranks alike, so the workers' caches form one distributed
 * cache, and losing a worker moves only the blocks it held.
 */
final class Rendezvous {
  private Rendezvous() {}

  /** Returns the score of worker {@code id} for block {@code block} of {@code inode}. */
  static long score(String id, long inode, long block) {
    byte[] w = id.getBytes(StandardCharsets.UTF_8);
    ByteBuffer key = ByteBuffer.allocate(w.length + 16);
    key.put(w).putLong(inode).putLong(block);
    return XxHash64.hash(key.array());
  }

  /**
   * Returns the indexes of {@code ids} in order of preference for block {@code block} of
   * {@code inode}: the home first, then the fallbacks.
   */
  static int[] rank(List<String> ids, long inode, long block) {
    int n = ids.size();
    long[] scores = new long[n];
    Integer[] order = new Integer[n];
    for (int i = 0; i < n; i++) {
      scores[i] = score(ids.get(i), inode, block);
      order[i] = i;
    }
    // Arrays.sort on objects is stable, as Go's slices.SortStableFunc.
    Arrays.sort(order, (a, b) -> Long.compareUnsigned(scores[b], scores[a]));
    int[] out = new int[n];
    for (int i = 0; i < n; i++) {
      out[i] = order[i];
    }
    return out;
  }
}
