package io.strata.hadoop;

import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertThrows;

import io.strata.core.error.DataPathUnavailableException;
import io.strata.core.error.Op;
import io.strata.core.error.Reason;
import io.strata.core.error.StrataException;
import io.strata.core.error.UnavailableException;
import java.io.IOException;
import org.junit.Test;

/** The mapping of the core's conditions to Hadoop's exceptions, for the temporary ones. */
public class TestHadoopErrors {
  /**
   * No live workers and a bucket that is unavailable stay IOExceptions (ServiceUnavailable, with
   * their cause in the message), never UnsupportedOperationException, which callers take for
   * permanent.
   */
  @Test
  public void temporaryConditionsStayIoExceptions() {
    IOException noWorkers = new DataPathUnavailableException(Op.WRITE, "/f",
        "write /f: no live workers");
    assertSame(noWorkers, HadoopErrors.translate(noWorkers));
    IOException bucket = new UnavailableException(Op.READ, "/f",
        "the bucket is unavailable: connection refused", null);
    assertSame(bucket, HadoopErrors.translate(bucket));
  }

  @Test
  public void unsupportedStaysUnsupported() {
    assertThrows(UnsupportedOperationException.class, () -> HadoopErrors.translate(
        new StrataException(Reason.UNSUPPORTED, Op.CREATE, "/f", "create /f: no", null)));
  }
}
