package io.strata.hbase.bench;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.Vector;
import java.util.function.Supplier;
import org.HdrHistogram.Histogram;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.Status;

/**
 * A YCSB binding that times another, per operation (as YCSB's DBWrapper does, without its
 * process-wide Measurements): one per client thread, merged by the driver.
 */
final class TimedDB extends DB {
  /** Latencies in microseconds, up to an hour, 3 significant digits. */
  static Histogram newHistogram() {
    return new Histogram(3_600_000_000L, 3);
  }

  private final DB db;
  private final Map<String, Histogram> latencies = new TreeMap<>();
  private final Map<String, Long> errors = new TreeMap<>();

  TimedDB(DB db) {
    this.db = db;
  }

  /** Latencies by operation (READ, UPDATE, INSERT, SCAN, READ-MODIFY-WRITE). */
  Map<String, Histogram> latencies() {
    return latencies;
  }

  /** Failed operations by operation. */
  Map<String, Long> errors() {
    return errors;
  }

  /** Records that {@code op} took {@code nanos} and ended with {@code s}. */
  void record(String op, long nanos, Status s) {
    latencies.computeIfAbsent(op, k -> newHistogram()).recordValue(Math.max(1, nanos / 1000));
    if (!s.isOk()) {
      errors.merge(op, 1L, Long::sum);
    }
  }

  @Override
  public void cleanup() throws site.ycsb.DBException {
    db.cleanup();
  }

  @Override
  public Status read(String table, String key, Set<String> fields,
      Map<String, ByteIterator> result) {
    return timed("READ", () -> db.read(table, key, fields, result));
  }

  @Override
  public Status scan(String table, String startkey, int recordcount, Set<String> fields,
      Vector<HashMap<String, ByteIterator>> result) {
    return timed("SCAN", () -> db.scan(table, startkey, recordcount, fields, result));
  }

  @Override
  public Status update(String table, String key, Map<String, ByteIterator> values) {
    return timed("UPDATE", () -> db.update(table, key, values));
  }

  @Override
  public Status insert(String table, String key, Map<String, ByteIterator> values) {
    return timed("INSERT", () -> db.insert(table, key, values));
  }

  @Override
  public Status delete(String table, String key) {
    return timed("DELETE", () -> db.delete(table, key));
  }

  private Status timed(String op, Supplier<Status> call) {
    long t = System.nanoTime();
    Status s = call.get();
    record(op, System.nanoTime() - t, s);
    return s;
  }
}
