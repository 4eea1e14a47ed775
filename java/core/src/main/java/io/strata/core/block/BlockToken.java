package io.strata.core.block;

import com.google.protobuf.ByteString;
import java.io.IOException;

/**
 * A file's block access token, which the workers check on every request for the file's blocks
 * (docs/security.md). It is replaced as it is renewed: by its {@link Renewal} shortly before it
 * expires (a reader's opens the file again, a writer's flushes nothing), and a writer's by each
 * flush's answer.
 */
public final class BlockToken {
  /** How long before its expiry a token with a renewal is renewed, milliseconds. */
  static final long RENEW_BEFORE_MS = 60_000;

  /** Fetches a new token for the same file. */
  @FunctionalInterface
  public interface Renewal {
    /**
     * Returns the new token, or null if the file is no longer the one the token was for.
     *
     * @throws IOException if the service cannot be asked
     */
    BlockToken renew() throws IOException;
  }

  private volatile ByteString bytes;
  private volatile long expires;
  private final Renewal renewal;

  /**
   * A token, as the service answered it.
   *
   * @param bytes the token
   * @param expires when it expires, milliseconds since the epoch
   * @param renewal how to renew it, or null for never (a cache-mode writer's: its one stream is
   *     checked as it opens)
   */
  public BlockToken(ByteString bytes, long expires, Renewal renewal) {
    this.bytes = bytes;
    this.expires = expires;
    this.renewal = renewal;
  }

  /** No token: the workers refuse every request for blocks with it. */
  public static BlockToken none() {
    return new BlockToken(ByteString.EMPTY, 0, null);
  }

  /** Replaces the token with a newer one (ignored if empty). */
  public void set(ByteString b, long exp) {
    if (!b.isEmpty()) {
      synchronized (this) {
        bytes = b;
        expires = exp;
      }
    }
  }

  /**
   * Returns the token, renewed first if it has a renewal and expires within a minute. A renewal
   * that fails leaves the old token, which the worker refuses once it expired, saying so.
   */
  public ByteString get() {
    if (renewal != null && expires - System.currentTimeMillis() < RENEW_BEFORE_MS) {
      synchronized (this) {
        if (expires - System.currentTimeMillis() < RENEW_BEFORE_MS) {
          try {
            BlockToken fresh = renewal.renew();
            if (fresh != null) {
              set(fresh.bytes, fresh.expires);
            }
          } catch (IOException e) {
            // Keep the old token: the worker's refusal says what is wrong.
          }
        }
      }
    }
    return bytes;
  }
}
