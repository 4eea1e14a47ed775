package io.strata.compat;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import io.strata.core.testing.DevCluster;
import io.strata.core.testing.DevClusterRule;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.FsShell;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.IntWritable;
import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.NullWritable;
import org.apache.hadoop.io.SequenceFile;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.io.compress.BZip2Codec;
import org.apache.hadoop.io.compress.CompressionCodec;
import org.apache.hadoop.io.compress.DefaultCodec;
import org.apache.hadoop.io.compress.GzipCodec;
import org.apache.hadoop.util.ReflectionUtils;
import org.apache.hadoop.util.ToolRunner;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.ClassRule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * Each command {@code strata fs} took from Hadoop for issue 39 (-checksum, -head, -text, -find,
 * -df, -setrep, -getmerge, -moveFromLocal, -moveToLocal, -concat), run against one real server
 * by the Go CLI ({@code bin/strata fs}, a process) and by Hadoop's own FsShell over the shaded jar
 * (in this JVM): the same standard output byte for byte, the same exit status, and the same
 * error messages.
 */
public class TestShellAgreesWithFsShell {
  @ClassRule public static final DevClusterRule STRATA = new DevClusterRule();
  @ClassRule public static final TemporaryFolder TMP = new TemporaryFolder();

  private static Configuration conf;
  private static FileSystem fs;

  /** One run: exit status, standard output (its bytes, one char each), standard error. */
  record Run(int rc, String out, String err) {}

  @BeforeClass
  public static void start() throws Exception {
    conf = new Configuration();
    conf.set("fs.defaultFS", "strata://default/");
    conf.set("fs.strata.meta.address", STRATA.address());
    conf.set("fs.strata.token", STRATA.token());
    fs = FileSystem.newInstance(new java.net.URI("strata://default/"), conf);
    Random r = new Random(3);
    write("/cmp/a.txt", "alpha\nbeta\n".getBytes(StandardCharsets.UTF_8));
    write("/cmp/b.txt", "gamma\n".getBytes(StandardCharsets.UTF_8));
    write("/cmp/empty", new byte[0]);
    byte[] big = new byte[3 * (1 << 20) + 7];
    r.nextBytes(big);
    write("/cmp/big.bin", big);
    write("/cmp/dir/sub/C.TXT", "upper\n".getBytes(StandardCharsets.UTF_8));
    write("/cmp/dir/sub/c.txt", "lower\n".getBytes(StandardCharsets.UTF_8));
    fs.mkdirs(new Path("/cmp/dir/emptydir"));
    StringBuilder lines = new StringBuilder();
    for (int i = 0; i < 5000; i++) {
      lines.append("line ").append(i).append('\n');
    }
    byte[] text = lines.toString().getBytes(StandardCharsets.UTF_8);
    compressed("/cmp/z/f.gz", GzipCodec.class, text);
    compressed("/cmp/z/f.deflate", DefaultCodec.class, text);
    compressed("/cmp/z/f.bz2", BZip2Codec.class, text);
    sequenceFile("/cmp/seq/plain.seq", SequenceFile.CompressionType.NONE, null);
    sequenceFile("/cmp/seq/record.seq", SequenceFile.CompressionType.RECORD, new DefaultCodec());
    sequenceFile("/cmp/seq/block.seq", SequenceFile.CompressionType.BLOCK, new DefaultCodec());
    // NB: not BZip2Codec: Hadoop's Java bzip2 randomizes the blocks of very repetitive data (the
    // keys' lengths here), which strata fs refuses to read, saying so.
    try (SequenceFile.Writer w = SequenceFile.createWriter(conf,
        SequenceFile.Writer.file(new Path("/cmp/seq/null.seq")),
        SequenceFile.Writer.keyClass(NullWritable.class),
        SequenceFile.Writer.valueClass(IntWritable.class))) {
      for (int i = 0; i < 100; i++) {
        w.append(NullWritable.get(), new IntWritable(i * i));
      }
    }
  }

  @AfterClass
  public static void stop() throws Exception {
    if (fs != null) {
      fs.close();
    }
    FileSystem.closeAll();
  }

  private static void write(String p, byte[] b) throws Exception {
    try (FSDataOutputStream out = fs.create(new Path(p), true)) {
      out.write(b);
    }
  }

  private static void compressed(String p, Class<? extends CompressionCodec> codec, byte[] b)
      throws Exception {
    CompressionCodec c = ReflectionUtils.newInstance(codec, conf);
    try (OutputStream out = c.createOutputStream(fs.create(new Path(p), true))) {
      out.write(b);
    }
  }

  private static void sequenceFile(String p, SequenceFile.CompressionType type,
      CompressionCodec codec) throws Exception {
    if (codec instanceof org.apache.hadoop.conf.Configurable) {
      ((org.apache.hadoop.conf.Configurable) codec).setConf(conf);
    }
    List<SequenceFile.Writer.Option> o = new ArrayList<>(List.of(
        SequenceFile.Writer.file(new Path(p)), SequenceFile.Writer.keyClass(LongWritable.class),
        SequenceFile.Writer.valueClass(Text.class)));
    o.add(codec == null ? SequenceFile.Writer.compression(type)
        : SequenceFile.Writer.compression(type, codec));
    try (SequenceFile.Writer w = SequenceFile.createWriter(conf,
        o.toArray(new SequenceFile.Writer.Option[0]))) {
      for (int i = 0; i < 2000; i++) {
        w.append(new LongWritable(i * 1_000_003L), new Text("value " + i + (i % 10 == 0
            ? " with ünïcode\tand a tab" : "")));
      }
    }
  }

  /** {@code strata fs ARGS}: the Go CLI, a process of its own. */
  private static Run strata(String... args) throws Exception {
    List<String> cmd = new ArrayList<>(List.of(System.getProperty(DevCluster.BINARY_PROPERTY), "fs", "--meta",
        STRATA.address(), "--token-file", STRATA.cluster().tokenFile().toString()));
    cmd.addAll(List.of(args));
    File out = TMP.newFile();
    File err = TMP.newFile();
    Process p = new ProcessBuilder(cmd).redirectOutput(out).redirectError(err).start();
    assertTrue("strata fs " + String.join(" ", args) + " did not end",
        p.waitFor(60, TimeUnit.SECONDS));
    return new Run(p.exitValue(), Files.readString(out.toPath(), StandardCharsets.ISO_8859_1),
        Files.readString(err.toPath(), StandardCharsets.UTF_8));
  }

  /** {@code hadoop fs ARGS}: Hadoop's FsShell over the shaded jar, in this JVM. */
  private static Run hadoop(String... args) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    PrintStream oldOut = System.out;
    PrintStream oldErr = System.err;
    int rc;
    try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
      System.setOut(o);
      System.setErr(e);
      rc = ToolRunner.run(new FsShell(new Configuration(conf)), args) & 0xff; // as a process's
    } finally {
      System.setOut(oldOut);
      System.setErr(oldErr);
    }
    String errText = err.toString(StandardCharsets.UTF_8).lines()
        .filter(l -> !l.contains(" WARN ") && !l.startsWith("log4j:"))
        .map(l -> l + "\n").collect(Collectors.joining());
    return new Run(rc, out.toString(StandardCharsets.ISO_8859_1), errText);
  }

  /** Runs both; they must agree on the exit status, the output and the errors. */
  private static Run same(String... args) throws Exception {
    Run h = hadoop(args);
    Run s = strata(args);
    String what = "fs " + String.join(" ", args);
    assertEquals(what + ": exit status (errors: hadoop's " + h.err() + ", strata's " + s.err() + ")",
        h.rc(), s.rc());
    assertEquals(what + ": output", h.out(), s.out());
    assertEquals(what + ": errors", h.err(), s.err());
    return h;
  }

  /** Both refuse the arguments as a usage error (their usage texts differ). */
  private static void sameUsageError(String... args) throws Exception {
    Run h = hadoop(args);
    Run s = strata(args);
    String what = "fs " + String.join(" ", args);
    assertEquals(what + ": exit status", 255, h.rc());
    assertEquals(what + ": exit status", 255, s.rc());
    assertEquals(what + ": the error's first line", h.err().lines().findFirst().orElse(""),
        s.err().lines().findFirst().orElse(""));
  }

  @Test
  public void checksum() throws Exception {
    Run r = same("-checksum", "/cmp/a.txt", "/cmp/empty", "/cmp/big.bin", "/cmp/dir/sub/c.txt");
    assertTrue(r.out(), r.out().contains("/cmp/big.bin\tCOMPOSITE-CRC32C\t"));
    same("-checksum", "-v", "/cmp/big.bin", "/cmp/a.txt");
    same("-checksum", "/cmp/*.txt", "strata://default/cmp/b.txt");
    same("-checksum", "/cmp/missing", "/cmp/a.txt");
    same("-checksum", "/cmp/dir");
    sameUsageError("-checksum");
  }

  @Test
  public void head() throws Exception {
    Run r = same("-head", "/cmp/big.bin");
    assertEquals(1024, r.out().length());
    same("-head", "/cmp/a.txt");
    same("-head", "/cmp/empty");
    same("-head", "/cmp/dir");
    same("-head", "/cmp/missing");
    sameUsageError("-head", "/cmp/a.txt", "/cmp/b.txt");
  }

  @Test
  public void text() throws Exception {
    same("-text", "/cmp/a.txt", "/cmp/z/f.gz", "/cmp/z/f.deflate", "/cmp/z/f.bz2");
    Run r = same("-text", "/cmp/seq/plain.seq", "/cmp/seq/record.seq", "/cmp/seq/block.seq",
        "/cmp/seq/null.seq");
    assertTrue(r.out(), r.out().contains("5000015\tvalue 5\n"));
    same("-text", "/cmp/seq/*.seq");
    same("-text", "/cmp/dir", "/cmp/missing");
  }

  @Test
  public void find() throws Exception {
    Run r = same("-find", "/cmp");
    assertTrue(r.out(), r.out().contains("/cmp/dir/sub/c.txt\n"));
    same("-find", "/cmp", "-name", "*.txt");
    same("-find", "/cmp", "-iname", "c.txt", "-print");
    same("-find", "/cmp/dir", "/cmp/z", "-name", "*", "-a", "-print0");
    same("-find", "/cmp", "-name", "{a,b}.*", "-and", "-name", "a*");
    same("-find", "/cmp/dir/");
    same("-find", "/cmp/missing", "/cmp/dir/sub");
    same("-find", "/cmp", "-bogus");
    // NB: "-find /cmp -name" without its pattern is a Java stack trace in Hadoop's FsShell
    // ("Fatal internal error"), and "find: Missing argument at 1" in strata fs.
  }

  @Test
  public void df() throws Exception {
    Run r = same("-df");
    assertTrue(r.out(), r.out().startsWith("Filesystem "));
    same("-df", "-h");
    same("-df", "/cmp", "strata://default/cmp/a.txt");
    same("-df", "/cmp/missing");
  }

  @Test
  public void setrep() throws Exception {
    Run r = same("-setrep", "3", "/cmp/dir");
    assertTrue(r.out(), r.out().contains("Replication 3 set: /cmp/dir/sub/c.txt\n"));
    same("-setrep", "-w", "1", "/cmp/a.txt", "/cmp/empty");
    same("-setrep", "-R", "2", "/cmp/*.txt");
    same("-setrep", "2", "/cmp/missing");
    sameUsageError("-setrep", "x", "/cmp/a.txt");
    sameUsageError("-setrep", "0", "/cmp/a.txt");
  }

  @Test
  public void getmerge() throws Exception {
    for (String[] flags : new String[][] {{}, {"-nl"}, {"-nl", "-skip-empty-file"}}) {
      File h = new File(TMP.getRoot(), "merged-hadoop");
      File s = new File(TMP.getRoot(), "merged-strata");
      List<String> common = new ArrayList<>(List.of("-getmerge"));
      common.addAll(List.of(flags));
      common.addAll(List.of("/cmp", "/cmp/dir/sub/*.txt"));
      List<String> ha = new ArrayList<>(common);
      ha.add(h.getPath());
      List<String> sa = new ArrayList<>(common);
      sa.add(s.getPath());
      Run hr = hadoop(ha.toArray(new String[0]));
      Run sr = strata(sa.toArray(new String[0]));
      assertEquals(List.of(flags) + ": " + hr + " " + sr, hr.rc(), sr.rc());
      assertEquals(hr.out(), sr.out());
      assertArrayEquals(String.join(" ", flags), Files.readAllBytes(h.toPath()),
          Files.readAllBytes(s.toPath()));
    }
    same("-getmerge", "/cmp/missing", new File(TMP.getRoot(), "never").getPath());
    assertFalse(new File(TMP.getRoot(), "never").exists());
    same("-getmerge", "/cmp", TMP.getRoot().getPath());
  }

  @Test
  public void moveFromLocal() throws Exception {
    File h = localTree("hadoop-src");
    File s = localTree("strata-src");
    Run hr = hadoop("-moveFromLocal", h.getPath(), "/mv-hadoop");
    Run sr = strata("-moveFromLocal", s.getPath(), "/mv-strata");
    assertEquals(hr.toString(), 0, hr.rc());
    assertEquals(sr.toString(), 0, sr.rc());
    assertEquals(hr.out(), sr.out());
    assertFalse(h.exists());
    assertFalse(s.exists());
    assertEquals(hadoop("-find", "/mv-hadoop").out().replace("/mv-hadoop", "/mv"),
        strata("-find", "/mv-strata").out().replace("/mv-strata", "/mv"));
    assertEquals(hadoop("-checksum", "/mv-hadoop/*").out().replace("/mv-hadoop", "/mv"),
        strata("-checksum", "/mv-strata/*").out().replace("/mv-strata", "/mv"));
    // A directory is not merged into one that exists: both refuse, and the source stays.
    File again = localTree("again");
    fs.mkdirs(new Path("/exists/again"));
    same("-moveFromLocal", again.getPath(), "/exists");
    assertTrue(new File(again, "inner/deep.txt").exists());
    File one = new File(TMP.getRoot(), "one-file");
    Files.writeString(one.toPath(), "moved\n");
    same("-moveFromLocal", one.getPath(), "/cmp/missing-dir/x");
    assertTrue(one.exists());
  }

  private static File localTree(String name) throws Exception {
    File d = new File(TMP.getRoot(), name);
    new File(d, "inner").mkdirs();
    Files.writeString(new File(d, "top.txt").toPath(), "top\n");
    Files.writeString(new File(d, "inner/deep.txt").toPath(), "deep\n");
    return d;
  }

  @Test
  public void concat() throws Exception {
    byte[] big = new byte[(1 << 20) + 333];
    new Random(11).nextBytes(big);
    for (String side : new String[] {"h", "s"}) {
      write("/cat-" + side + "/t", "target\n".getBytes(StandardCharsets.UTF_8));
      write("/cat-" + side + "/a", big);
      write("/cat-" + side + "/b", "small\n".getBytes(StandardCharsets.UTF_8));
    }
    Run h = hadoop("-concat", "/cat-h/t", "/cat-h/a", "/cat-h/b");
    Run s = strata("-concat", "/cat-s/t", "/cat-s/a", "/cat-s/b");
    assertEquals(h + " " + s, 0, h.rc());
    assertEquals(h.toString(), h, s);
    assertEquals(hadoop("-find", "/cat-h").out().replace("/cat-h", "/cat"),
        strata("-find", "/cat-s").out().replace("/cat-s", "/cat"));
    assertEquals(hadoop("-checksum", "/cat-h/t").out().replace("/cat-h", "/cat"),
        strata("-checksum", "/cat-s/t").out().replace("/cat-s", "/cat"));
    assertEquals(hadoop("-cat", "/cat-h/t").out(), strata("-cat", "/cat-s/t").out());
    assertEquals(7 + big.length + 6, fs.getFileStatus(new Path("/cat-s/t")).getLen());
    same("-concat", "/cmp/missing", "/cmp/a.txt", "/cmp/b.txt");
    same("-concat", "/cmp/a.txt", "/cmp/b.txt");
    same("-concat", "/cmp/a.txt", "/cmp/b.txt", "/cmp/dir");
    same("-concat");
  }

  @Test
  public void moveToLocal() throws Exception {
    Run r = same("-moveToLocal", "/cmp/a.txt", new File(TMP.getRoot(), "x").getPath());
    assertEquals(1, r.rc());
    assertTrue(fs.exists(new Path("/cmp/a.txt")));
  }
}
