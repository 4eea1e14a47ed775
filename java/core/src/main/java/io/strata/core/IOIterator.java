package io.strata.core;

import java.io.IOException;
import java.util.NoSuchElementException;

/**
 * An iterator whose steps may do I/O, as Hadoop's RemoteIterator (which the Hadoop adapter wraps
 * around it).
 *
 * @param <T> the element type
 */
public interface IOIterator<T> {
  /** Reports whether {@link #next} has an element, fetching it if need be. */
  boolean hasNext() throws IOException;

  /**
   * Returns the next element.
   *
   * @throws NoSuchElementException when there is none
   */
  T next() throws IOException;
}
