package io.strata.hadoop;

import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.DelegateToFileSystem;
import org.apache.hadoop.fs.Path;

/**
 * The strata:// AbstractFileSystem (FileContext API), delegating to {@link StrataFileSystem}.
 * Register it with {@code fs.AbstractFileSystem.strata.impl = io.strata.hadoop.StrataFs}.
 */
public class StrataFs extends DelegateToFileSystem {
  /** Called by AbstractFileSystem.createFileSystem. */
  public StrataFs(URI uri, Configuration conf) throws IOException, URISyntaxException {
    // No authority needed: strata:///path names the default namespace.
    super(uri, new StrataFileSystem(), conf, StrataFileSystem.SCHEME, false);
  }

  /**
   * rename2 in one atomic call, instead of AbstractFileSystem's emulation (checks, delete, then
   * rename), which is neither atomic nor HDFS's exceptions.
   */
  @Override
  public void renameInternal(Path src, Path dst, boolean overwrite) throws IOException {
    checkPath(src);
    checkPath(dst);
    ((StrataFileSystem) fsImpl).rename2(src, dst, overwrite);
  }

  /** Strata has no default port: addresses come from fs.strata.meta.address. */
  @Override
  public int getUriDefaultPort() {
    return -1;
  }
}
