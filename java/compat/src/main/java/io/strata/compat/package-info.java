/**
 * Strata beside HDFS: a MiniDFSCluster and the Hadoop configurations of both sides ({@link
 * Sides}), DistCp between them on the local job runner ({@link Copies}), and the benchmark of
 * DistCp and getFileChecksum against HDFS ({@link DistCpBench}). Its tests check checksums,
 * DistCp both ways, and {@code strata fs} against Hadoop's FsShell. Not shipped.
 */
package io.strata.compat;
