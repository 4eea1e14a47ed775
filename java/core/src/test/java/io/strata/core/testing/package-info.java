/**
 * Test fixtures shared with strata-hadoop through the test jar: a real {@code strata server
 * --dev} process per test class. Not mocks.
 */
package io.strata.core.testing;
