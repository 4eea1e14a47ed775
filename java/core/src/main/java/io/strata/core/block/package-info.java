/**
 * The block I/O service provider interface: where the data path (workers, short-circuit reads)
 * plugs into the client. {@link io.strata.core.worker.WorkerBlockIO} implements it.
 */
package io.strata.core.block;
