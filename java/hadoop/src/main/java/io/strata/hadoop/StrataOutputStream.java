package io.strata.hadoop;

import io.strata.core.FileOutput;
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
 * before close learns it does not have it, and the capabilities are not declared. Failures are
 * Hadoop's exceptions ({@link HadoopErrors}), as create's are: with deferred creates ({@link
 * StrataConfigKeys#CREATE_DEFERRED}) a create's failure may come from a write, hflush or close.
 */
final class StrataOutputStream extends OutputStream implements Syncable, StreamCapabilities {
  private final FileOutput writer;

  StrataOutputStream(FileOutput writer) {
    this.writer = writer;
  }

  @Override
  public void write(int b) throws IOException {
    try {
      writer.write(b);
    } catch (IOException e) {
      throw HadoopErrors.translate(e);
    }
  }

  @Override
  public void write(byte[] b, int off, int len) throws IOException {
    try {
      writer.write(b, off, len);
    } catch (IOException e) {
      throw HadoopErrors.translate(e);
    }
  }

  /** Has nothing to do (see {@link FileWriter#flush}); {@link #hflush} commits. */
  @Override
  public void flush() throws IOException {
    writer.flush();
  }

  @Override
  public void close() throws IOException {
    try {
      writer.close();
    } catch (IOException e) {
      throw HadoopErrors.translate(e);
    }
  }

  @Override
  public void hflush() throws IOException {
    try {
      writer.hflush();
    } catch (IOException e) {
      throw HadoopErrors.translate(e);
    }
  }

  @Override
  public void hsync() throws IOException {
    try {
      writer.hsync();
    } catch (IOException e) {
      throw HadoopErrors.translate(e);
    }
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
