package io.strata.hadoop;

import io.strata.core.FileWriter;
import java.io.IOException;
import java.io.OutputStream;
import org.apache.hadoop.fs.StreamCapabilities;
import org.apache.hadoop.fs.Syncable;

/**
 * A Strata file open for writing: the core writer, with Hadoop's Syncable. In a block-mode
 * namespace hflush and hsync commit what was written to the service (visible to new readers and
 * durable, {@link FileWriter#hflush}) and the stream declares both capabilities, as HBase's
 * write-ahead log requires. In a cache-mode namespace a file is one object, visible on close
 * only: hflush and hsync throw UnsupportedOperationException (rather than letting
 * FSDataOutputStream downgrade them silently to flush), so that a caller that needs durability
 * before close learns it does not have it, and the capabilities are not declared.
 */
final class StrataOutputStream extends OutputStream implements Syncable, StreamCapabilities {
  private final FileWriter writer;

  StrataOutputStream(FileWriter writer) {
    this.writer = writer;
  }

  @Override
  public void write(int b) throws IOException {
    writer.write(b);
  }

  @Override
  public void write(byte[] b, int off, int len) throws IOException {
    writer.write(b, off, len);
  }

  /** Has nothing to do (see {@link FileWriter#flush}); {@link #hflush} commits. */
  @Override
  public void flush() throws IOException {
    writer.flush();
  }

  @Override
  public void close() throws IOException {
    writer.close();
  }

  @Override
  public void hflush() throws IOException {
    writer.hflush();
  }

  @Override
  public void hsync() throws IOException {
    writer.hsync();
  }

  /**
   * hflush and hsync in a block-mode namespace; no other stream capability. NB: Hadoop
   * deprecates the hflush name in favour of probing hsync, but HBase probes both.
   */
  @Override
  @SuppressWarnings("deprecation")
  public boolean hasCapability(String capability) {
    switch (capability.toLowerCase(java.util.Locale.ROOT)) {
      case StreamCapabilities.HFLUSH:
      case StreamCapabilities.HSYNC:
        return writer.canSync();
      default:
        return false;
    }
  }

  @Override
  public String toString() {
    return "StrataOutputStream{" + writer.path() + "}";
  }
}
