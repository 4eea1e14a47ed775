/**
 * The data path through the workers: worker discovery and rendezvous placement (identical to the
 * Go client's internal/blocks), write streams, and reads by RPC or short-circuit from a worker's
 * cache file on this host. {@link io.strata.core.worker.WorkerBlockIO} is the entry point; the
 * rest is package-private.
 */
package io.strata.core.worker;
