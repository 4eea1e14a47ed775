package io.strata.hadoop;

import io.strata.core.testing.DevClusterRule;
import java.net.URI;
import org.junit.ClassRule;

/** Hadoop's older FileSystem contract suite in the block-mode namespace "default". */
public class TestStrataFileSystemContract extends StrataFileSystemContractBase {
  @ClassRule public static final DevClusterRule SERVER = new DevClusterRule();

  @Override
  protected String address() {
    return SERVER.address();
  }

  @Override
  protected URI uri() {
    return URI.create("strata://default/");
  }
}
