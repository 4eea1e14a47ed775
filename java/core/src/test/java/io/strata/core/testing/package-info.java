/**
 * Test fixtures shared with strata-hadoop through the test jar: a real {@code strata server
 * --dev} process per test class, and {@link io.strata.core.testing.FakeMember}, a scripted
 * stand-in for one member of the namespace service's Raft group (a real gRPC server on
 * loopback), for the failures a single dev server cannot produce. Not mocks.
 */
package io.strata.core.testing;
