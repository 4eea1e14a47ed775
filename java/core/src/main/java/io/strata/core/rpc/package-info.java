/**
 * The gRPC plumbing of the client: service addresses and the channel to the namespace service.
 * No file system semantics here.
 */
package io.strata.core.rpc;
