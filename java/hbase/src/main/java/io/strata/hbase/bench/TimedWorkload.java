package io.strata.hbase.bench;

import site.ycsb.DB;
import site.ycsb.Status;
import site.ycsb.workloads.CoreWorkload;

/**
 * YCSB's CoreWorkload, with its read-modify-write (workload F) timed whole into the thread's
 * {@link TimedDB}, as YCSB reports it (its read and its update are timed as such too).
 */
final class TimedWorkload extends CoreWorkload {
  @Override
  public void doTransactionReadModifyWrite(DB db) {
    long t = System.nanoTime();
    super.doTransactionReadModifyWrite(db);
    ((TimedDB) db).record("READ-MODIFY-WRITE", System.nanoTime() - t, Status.OK);
  }
}
