/**
 * The strata:// Hadoop file system: {@link io.strata.hadoop.StrataFileSystem} (FileSystem) and
 * {@link io.strata.hadoop.StrataFs} (AbstractFileSystem), thin adapters over strata-core that
 * convert paths, statuses and errors and follow HDFS's answers. Not a client of its own: all
 * protocol and semantics live in io.strata.core and the namespace service.
 */
package io.strata.hadoop;
