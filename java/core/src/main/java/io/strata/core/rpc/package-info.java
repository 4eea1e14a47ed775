/**
 * The RPC plumbing of the client: service addresses, the channels to the namespace service's
 * members and to the workers, callwire's connections to the members ({@link
 * io.strata.core.rpc.CallSocket}), and {@link io.strata.core.rpc.MetaCaller}, which finds the
 * leader of the namespace service and is the one layer that retries metadata calls. No file
 * system semantics here.
 */
package io.strata.core.rpc;
