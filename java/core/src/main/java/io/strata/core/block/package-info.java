/**
 * The block I/O service provider interface: where the data path (workers, short-circuit reads)
 * plugs into the client. {@link io.strata.core.block.NoBlockIO} stands in until it exists.
 */
package io.strata.core.block;
