/**
 * The gRPC plumbing of the client: service addresses and the channels to the namespace service
 * and the workers. No file system semantics here.
 */
package io.strata.core.rpc;
