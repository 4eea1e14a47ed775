package io.strata.hadoop;

import io.strata.core.FileWriter;
import java.io.IOException;
import java.io.OutputStream;
import org.apache.hadoop.fs.StreamCapabilities;
import org.apache.hadoop.fs.Syncable;

/**
 * A Strata file open for writing: the core writer, with Hadoop's Syncable declared and refused.
 * Content becomes visible, whole, on close; hflush and hsync throw UnsupportedOperationException
 * (rather than letting FSDataOutputStream downgrade them silently to flush) so that a caller that
 * needs durability before close learns it does not have it.
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

  @Override
  public void flush() throws IOException {
    writer.flush();
  }

  @Override
  public void close() throws IOException {
    writer.close();
  }

  @Override
  public void hflush() {
    throw new UnsupportedOperationException("hflush " + writer.path()
        + ": not supported by Strata yet; content becomes visible on close");
  }

  @Override
  public void hsync() {
    throw new UnsupportedOperationException("hsync " + writer.path()
        + ": not supported by Strata yet; content becomes durable on close");
  }

  /** Neither hflush nor hsync, nor any other stream capability, is offered. */
  @Override
  public boolean hasCapability(String capability) {
    return false;
  }

  @Override
  public String toString() {
    return "StrataOutputStream{" + writer.path() + "}";
  }
}
