/**
 * Errors of the Strata client: the conditions the namespace service reports ({@link
 * io.strata.core.error.Reason}), the exceptions that carry them, and {@link
 * io.strata.core.error.ErrorTranslator}, the one place where gRPC statuses become exceptions.
 * Independent of any framework; the Hadoop adapter maps these to Hadoop's exception classes.
 */
package io.strata.core.error;
