package io.strata.core.worker;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;

import io.strata.proto.v1.WorkerInfo;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.Test;

/**
 * XXH64 and rendezvous ranking against vectors computed by the Go side: cespare/xxhash/v2's
 * Sum64 and internal/blocks.Rank (printed by a throwaway Go program run against the module, see
 * docs/java.md). Every client must place blocks alike, so these must never drift.
 */
public class PlacementTest {
  private static final List<String> WORKERS = List.of("w-0000000000000001",
      "w-0000000000000002", "w-0000000000000003", "w-0000000000000004", "w-779ae0b85f38507f");

  private static long xxh(String s) {
    return XxHash64.hash(s.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  public void xxHash64MatchesGo() {
    assertEquals(0xef46db3751d8e999L, xxh(""));
    assertEquals(0xd24ec4f1a98c6e5bL, xxh("a"));
    assertEquals(0x44bc2cf5ad770999L, xxh("abc"));
    assertEquals(0xbc6068db3dfe0f78L, xxh("w-779ae0b85f38507f"));
    assertEquals("32 bytes: one full stripe", 0x642a94958e71e6c5L,
        xxh("0123456789abcdef0123456789abcdef"));
    assertEquals("stripes, then 8-, 4- and 1-byte tails", 0xbacf8decaf7f2d1eL,
        xxh("The quick brown fox jumps over the lazy dog, twice over: 0123456789"));
  }

  @Test
  public void scoreIsTheIdThenInodeAndBlockBigEndian() {
    byte[] key = ByteBuffer.allocate(19).put("w-a".getBytes(StandardCharsets.UTF_8))
        .putLong(2).putLong(0x4930072d7e5eec7eL).array();
    assertEquals(0x9f01017e9b9834f5L, XxHash64.hash(key));
    assertEquals(0x9f01017e9b9834f5L, Rendezvous.score("w-a", 2, 0x4930072d7e5eec7eL));
  }

  @Test
  public void rankMatchesGo() {
    assertArrayEquals(new int[] {3, 1, 0, 4, 2}, Rendezvous.rank(WORKERS, 1, 0));
    assertArrayEquals(new int[] {2, 0, 4, 1, 3}, Rendezvous.rank(WORKERS, 2, 0));
    assertArrayEquals(new int[] {4, 1, 3, 2, 0},
        Rendezvous.rank(WORKERS, 2, 5273723055625923710L));
    assertArrayEquals("inode and block past Long.MAX_VALUE (Go's uint64)",
        new int[] {2, 4, 1, 0, 3}, Rendezvous.rank(WORKERS, -1L, Long.MIN_VALUE));
    assertArrayEquals(new int[] {1, 0, 4, 3, 2}, Rendezvous.rank(WORKERS, 12345, 678910));
    assertArrayEquals(new int[] {4, 3, 2, 1, 0}, Rendezvous.rank(WORKERS, 42, 7));
  }

  @Test
  public void rankOfWorkersAndWriterOrder() {
    List<WorkerInfo> ws = List.of(worker("w-0000000000000001", "h1"),
        worker("w-0000000000000002", "h2"), worker("w-0000000000000003", "h3"),
        worker("w-0000000000000004", "h4"), worker("w-779ae0b85f38507f", "h5"));
    List<WorkerInfo> ranked = WorkerSet.rank(ws, 1, 0);
    assertEquals("w-0000000000000004", ranked.get(0).getId());
    assertEquals("w-0000000000000003", ranked.get(4).getId());
    // Not local (no socket file): the writer order is the rank of (inode, 0).
    WorkerSet set = new WorkerSet(List::of, null, true, java.time.Duration.ofSeconds(1));
    assertEquals(ranked, set.writerOrder(ws, 1));
    assertEquals(List.of(), WorkerSet.rank(List.of(), 1, 0));
  }

  private static WorkerInfo worker(String id, String host) {
    return WorkerInfo.newBuilder().setId(id).setHost(host).setAddress(host + ":1")
        .setUnixSocket("/nonexistent/" + id + ".sock").build();
  }
}
