package io.strata.hadoop;

import io.strata.core.FileInfo;
import io.strata.core.IOIterator;
import java.io.IOException;
import java.util.NoSuchElementException;
import java.util.function.Function;
import org.apache.hadoop.fs.RemoteIterator;

/**
 * Hadoop's RemoteIterator over the core's paged listing: entries stream from the service a page
 * at a time, converted as they go.
 *
 * @param <T> the Hadoop status type
 */
final class Listings<T> implements RemoteIterator<T> {
  /** Converts one entry; may do I/O (block locations). */
  @FunctionalInterface
  interface Converter<T> {
    T convert(FileInfo info) throws IOException;
  }

  private final IOIterator<FileInfo> it;
  private final Converter<T> convert;

  Listings(IOIterator<FileInfo> it, Converter<T> convert) {
    this.it = it;
    this.convert = convert;
  }

  /** Wraps a conversion that does no I/O. */
  static <T> Listings<T> of(IOIterator<FileInfo> it, Function<FileInfo, T> f) {
    return new Listings<>(it, f::apply);
  }

  @Override
  public boolean hasNext() throws IOException {
    try {
      return it.hasNext();
    } catch (IOException e) {
      throw HadoopErrors.translate(e);
    }
  }

  @Override
  public T next() throws IOException {
    if (!hasNext()) {
      throw new NoSuchElementException("no more entries");
    }
    try {
      return convert.convert(it.next());
    } catch (IOException e) {
      throw HadoopErrors.translate(e);
    }
  }
}
