package io.strata.core.rpc;

import java.util.function.BiFunction;

/**
 * An RPC that sends {@code first} on its first attempt and {@code again} on every later one: a
 * mutation's first send is marked {@code Header.first_attempt}, so that the service skips
 * looking its request id up among the answers it kept (about thirty reads of its state), and a
 * resend is not, so that a request applied before is answered as it was then. Not safe for
 * concurrent use: {@link MetaCaller} makes the attempts of a call in turn.
 */
public final class Sends<Q, T> implements MetaCaller.Call<T> {
  private final Q first;
  private final Q again;
  private final BiFunction<MetaCaller.Unary, Q, T> rpc;
  private boolean sent;

  /** Sends {@code first}, then {@code again} on each retry, through {@code rpc}. */
  public Sends(Q first, Q again, BiFunction<MetaCaller.Unary, Q, T> rpc) {
    this.first = first;
    this.again = again;
    this.rpc = rpc;
  }

  @Override
  public T run(MetaCaller.Unary u) {
    Q q = sent ? again : first;
    sent = true;
    return rpc.apply(u, q);
  }
}
