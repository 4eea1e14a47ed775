package io.strata.hadoop;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.io.EOFException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileRange;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.StreamCapabilities;
import org.junit.Test;

/**
 * Vectored reads (issue 42): the ranges come back right, read in parallel, in heap and direct
 * buffers; a range past the end fails its future with EOFException; overlapping ranges are
 * refused.
 */
public class TestStrataVectoredReads extends StrataTestBase {
  @Test
  public void rangesReadInParallel() throws Exception {
    Path f = new Path(base, "vectored");
    byte[] d = new byte[5 << 20];
    for (int i = 0; i < d.length; i++) {
      d[i] = (byte) (i * 131 + i / 7);
    }
    try (FSDataOutputStream out = fs.create(f)) {
      out.write(d);
    }
    try (FSDataInputStream in = fs.open(f)) {
      assertTrue(in.hasCapability(StreamCapabilities.VECTOREDIO));
      for (boolean direct : new boolean[] {false, true}) {
        List<FileRange> ranges = new ArrayList<>();
        for (long off : new long[] {4_000_000, 10, 1 << 20, 3_000_123, (5 << 20) - 1000}) {
          ranges.add(FileRange.createFileRange(off, 1000 + (int) (off % 300_000)));
        }
        ranges.set(4, FileRange.createFileRange((5 << 20) - 1000, 1000));
        in.readVectored(ranges, n -> direct ? ByteBuffer.allocateDirect(n) : ByteBuffer.allocate(n));
        for (FileRange r : ranges) {
          ByteBuffer b = r.getData().get();
          byte[] got = new byte[b.remaining()];
          b.get(got);
          byte[] want = java.util.Arrays.copyOfRange(d, (int) r.getOffset(),
              (int) r.getOffset() + r.getLength());
          assertArrayEquals("range " + r + " direct=" + direct, want, got);
        }
      }
      List<FileRange> past = List.of(FileRange.createFileRange((5 << 20) - 10, 100));
      in.readVectored(past, ByteBuffer::allocate);
      ExecutionException e = assertThrows(ExecutionException.class,
          () -> past.get(0).getData().get());
      assertTrue(String.valueOf(e.getCause()), e.getCause() instanceof EOFException);
      assertThrows(IllegalArgumentException.class, () -> in.readVectored(
          List.of(FileRange.createFileRange(0, 100), FileRange.createFileRange(50, 100)),
          ByteBuffer::allocate));
    }
  }
}
