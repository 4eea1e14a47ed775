/**
 * The Strata client core: {@link io.strata.core.StrataClient} speaks to the namespace service
 * over gRPC, with paths ({@link io.strata.core.StrataPath}), paged listings, lease renewal and
 * the small-file read/write path. It has no framework dependency (no Hadoop): the Hadoop
 * FileSystem in strata-hadoop is a thin adapter over it. Files larger than the inline limit go
 * through the {@link io.strata.core.block.BlockIO} data path, the workers' by default ({@link
 * io.strata.core.worker.WorkerBlockIO}).
 */
package io.strata.core;
