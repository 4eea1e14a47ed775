package io.strata.hadoop;

import io.strata.core.testing.DevClusterRule;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.junit.After;
import org.junit.Before;
import org.junit.ClassRule;
import org.junit.Rule;
import org.junit.rules.TestName;

/** A dev server per test class and a fresh strata://default/ file system per test. */
public abstract class StrataTestBase {
  @ClassRule public static final DevClusterRule SERVER = new DevClusterRule();
  @Rule public final TestName name = new TestName();

  protected FileSystem fs;
  protected Path base;

  protected static Configuration conf() {
    Configuration conf = new Configuration();
    conf.set(StrataConfigKeys.META_ADDRESS, SERVER.address());
    conf.set(StrataConfigKeys.TOKEN, io.strata.core.testing.DevCluster.tokenOf(SERVER.address()));
    return conf;
  }

  /** A new (uncached) instance for {@code uri} with {@code conf}. */
  protected static FileSystem newFs(String uri, Configuration conf) throws IOException {
    return FileSystem.newInstance(URI.create(uri), conf);
  }

  @Before
  public void setUpFs() throws IOException {
    fs = newFs("strata://default/", conf());
    base = new Path("/" + getClass().getSimpleName() + "/" + name.getMethodName());
    fs.mkdirs(base);
  }

  @After
  public void tearDownFs() throws IOException {
    if (fs != null) {
      fs.delete(base, true);
      fs.close();
    }
  }

  protected static void write(FileSystem fs, Path p, String content) throws IOException {
    try (FSDataOutputStream out = fs.create(p, true)) {
      out.write(content.getBytes(StandardCharsets.UTF_8));
    }
  }

  protected static String read(FileSystem fs, Path p) throws IOException {
    try (FSDataInputStream in = fs.open(p)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }
}
