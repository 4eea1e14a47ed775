/**
 * HBase's write-ahead log on {@code strata://}: {@link io.strata.hbase.wal.StrataLogWriter}, the
 * writer HBase's asynchronous log provider takes for each log file when {@code
 * hbase.regionserver.wal.async.writer.impl} names it, and its output, {@link
 * io.strata.hbase.wal.StrataAsyncOutput}, which keeps one flush in flight per log file and sends
 * the next, with everything asked for meanwhile, as soon as it returns. It uses the file system
 * through Hadoop's API only (the Strata client comes from the shaded jar, as any file system's);
 * HBase and Hadoop are provided by the region server. Not the log's format, not its replay: both
 * are HBase's own.
 */
package io.strata.hbase.wal;
