package io.strata.bench;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.hdfs.DistributedFileSystem;
import org.apache.hadoop.hdfs.HdfsConfiguration;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.fs.SafeModeAction;
import org.apache.hadoop.hdfs.tools.offlineImageViewer.OfflineImageViewerPB;

/**
 * A real HDFS fsimage of a tree with varied attributes, for the import's tests: a MiniDFSCluster
 * (one NameNode, one DataNode, in this JVM) is filled with {@link #fill}, its namespace saved
 * ({@code saveNamespace}), and the image copied out with its MD5 file and the text that {@code
 * hdfs oiv -p Delimited} writes of it.
 *
 * <pre>
 * java -cp ... io.strata.bench.HdfsImage --out DIR [--files N] [--seed S]
 * </pre>
 *
 * writes DIR/fsimage, DIR/fsimage.md5 and DIR/fsimage.txt. The Go tests' image
 * (internal/fsimage/testdata) is made so: see its README.
 */
public final class HdfsImage implements AutoCloseable {
  /** The directory with a quota, and its quotas. */
  public static final String QUOTA_DIR = "/quota";

  public static final long NS_QUOTA = 100_000;
  public static final long DS_QUOTA = 1L << 40;

  /** The symbolic link the tree holds (the import refuses links, and counts them). */
  public static final String LINK = "/links/to-readme";

  private final MiniDFSCluster cluster;
  private final File base;

  /** Starts a cluster whose storage lives under {@code base}. */
  public HdfsImage(File base) throws IOException {
    this.base = base;
    Configuration conf = new HdfsConfiguration();
    conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, base.getAbsolutePath());
    // Small blocks, so that files of a few KiB are several blocks.
    conf.setLong("dfs.namenode.fs-limits.min-block-size", 0);
    conf.setInt("dfs.bytes-per-checksum", 512);
    conf.setInt("dfs.replication", 1);
    conf.setLong("dfs.namenode.accesstime.precision", 1);
    // A file's close (and a new block) waits until the DataNode has reported the block before:
    // the client asks again after 10 ms, not 400 (which made a file take 160 ms).
    conf.setInt("dfs.client.block.write.locateFollowingBlock.initial.delay.ms", 10);
    cluster = new MiniDFSCluster.Builder(conf).numDataNodes(1).format(true).build();
    cluster.waitActive();
  }

  /** The cluster's file system. */
  public DistributedFileSystem fs() throws IOException {
    return cluster.getFileSystem();
  }

  /**
   * Fills the namespace: about {@code files} files under nested directories, with varied sizes
   * (empty, one block, several), permissions, owners, groups, times, replication and block sizes;
   * an empty file and an empty directory, names in several scripts and with spaces, a directory
   * with quotas, and a symbolic link.
   */
  public void fill(int files, long seed) throws IOException {
    DistributedFileSystem fs = fs();
    Random rnd = new Random(seed);
    String[] users = {"alice", "bob", "hive", "spark", "ü-user"};
    String[] groups = {"analysts", "etl", "supergroup", "données"};
    short[] perms = {0644, 0600, 0755, 0700, 0444, 01777, 0640, 0750};
    String[] dirNames = {"part", "données", "日本語", "with space", "emoji-\uD83D\uDE00", "x"};
    List<Path> dirs = new ArrayList<>();
    for (int db = 0; db < 3; db++) {
      for (int t = 0; t < 4; t++) {
        Path table = new Path("/warehouse/db" + db + ".db/" + dirNames[(db + t) % dirNames.length]
            + "-t" + t);
        for (int p = 0; p < 5; p++) {
          Path part = new Path(table, "dt=2026-11-0" + (p + 1) + "/h=" + (p % 3));
          fs.mkdirs(part);
          dirs.add(part);
        }
      }
    }
    byte[] data = new byte[20_000];
    rnd.nextBytes(data);
    // In parallel (the NameNode takes them so), each file's attributes from a generator of its
    // own, so that the tree is the same whatever the order.
    ExecutorService pool = Executors.newFixedThreadPool(8);
    List<Future<?>> done = new ArrayList<>();
    for (int i = 0; i < files; i++) {
      int n = i;
      done.add(pool.submit(() -> {
        writeFile(fs, new Random(seed * 1_000_003 + n), n, dirs, data, users, groups, perms);
        return null;
      }));
    }
    pool.shutdown();
    try {
      for (Future<?> f : done) {
        f.get();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new java.io.InterruptedIOException("fill interrupted");
    } catch (ExecutionException e) {
      throw new IOException(e.getCause());
    }
    for (int i = 0; i < dirs.size(); i += 3) {
      fs.setPermission(dirs.get(i), new FsPermission(perms[rnd.nextInt(perms.length)]));
      fs.setOwner(dirs.get(i), users[rnd.nextInt(users.length)], groups[rnd.nextInt(groups.length)]);
    }
    fs.create(new Path("/empty/file")).close();
    fs.mkdirs(new Path("/empty/dir"));
    fs.mkdirs(new Path(QUOTA_DIR + "/inside"));
    write(fs, new Path(QUOTA_DIR + "/inside/f"), "under a quota");
    fs.setQuota(new Path(QUOTA_DIR), NS_QUOTA, DS_QUOTA);
    write(fs, new Path("/README"), "a real HDFS image\n");
    FileSystem.enableSymlinks();
    fs.mkdirs(new Path("/links"));
    fs.createSymlink(new Path("/README"), new Path(LINK), false);
    // Directories' modification times last, so that the files above leave them as set.
    for (int i = 1; i < dirs.size(); i += 4) {
      fs.setTimes(dirs.get(i), 1_690_000_000_000L + i * 60_000L, -1);
    }
  }

  /** File n of the tree, in one of dirs, its size and attributes drawn from rnd. */
  private static void writeFile(FileSystem fs, Random rnd, int n, List<Path> dirs, byte[] data,
      String[] users, String[] groups, short[] perms) throws IOException {
    Path dir = dirs.get(rnd.nextInt(dirs.size()));
    Path f = new Path(dir, String.format("part-%05d-%s.parquet", n, n % 7 == 0 ? "ü" : "c000"));
    int size = n % 11 == 0 ? 0 : rnd.nextInt(data.length);
    long blockSize = n % 300 == 1 ? 4096 : new long[] {1 << 20, 64L << 20, 128L << 20}[rnd.nextInt(3)];
    short repl = (short) (1 + rnd.nextInt(3));
    try (FSDataOutputStream out = fs.create(f, true, 4096, repl, blockSize)) {
      out.write(data, 0, size);
    }
    fs.setPermission(f, new FsPermission(perms[rnd.nextInt(perms.length)]));
    fs.setOwner(f, users[rnd.nextInt(users.length)], groups[rnd.nextInt(groups.length)]);
    long mtime = 1_700_000_000_000L + rnd.nextInt(1_000_000_000);
    fs.setTimes(f, mtime, mtime + rnd.nextInt(100_000_000));
  }

  private static void write(FileSystem fs, Path p, String content) throws IOException {
    try (OutputStream out = fs.create(p, true)) {
      out.write(content.getBytes(StandardCharsets.UTF_8));
    }
  }

  /**
   * Saves the namespace and copies the newest image to {@code out}/fsimage, with its MD5 file
   * as fsimage.md5 and its Delimited text (tab-separated, with the header) as fsimage.txt.
   */
  public void save(File out) throws Exception {
    DistributedFileSystem fs = fs();
    fs.setSafeMode(SafeModeAction.ENTER);
    fs.saveNamespace();
    fs.setSafeMode(SafeModeAction.LEAVE);
    File current = new File(cluster.getNameDirs(0).iterator().next().getPath(), "current");
    File newest = null;
    for (File f : current.listFiles()) {
      if (f.getName().matches("fsimage_\\d+")
          && (newest == null || f.getName().compareTo(newest.getName()) > 0)) {
        newest = f;
      }
    }
    if (newest == null) {
      throw new IOException("no image in " + current);
    }
    Files.createDirectories(out.toPath());
    Files.copy(newest.toPath(), new File(out, "fsimage").toPath(),
        StandardCopyOption.REPLACE_EXISTING);
    // The MD5 file names the image; the import reads the digest only.
    Files.copy(new File(newest.getPath() + ".md5").toPath(), new File(out, "fsimage.md5").toPath(),
        StandardCopyOption.REPLACE_EXISTING);
    // oiv writes times in the JVM's zone: UTC, which the readers of fsimage.txt assume.
    java.util.TimeZone.setDefault(java.util.TimeZone.getTimeZone("UTC"));
    int rc = OfflineImageViewerPB.run(new String[] {
      "-p", "Delimited", "-i", newest.getPath(), "-o", new File(out, "fsimage.txt").getPath(),
      "-t", new File(base, "oiv-tmp").getPath()});
    if (rc != 0) {
      throw new IOException("hdfs oiv -p Delimited exited " + rc);
    }
  }

  @Override
  public void close() {
    cluster.shutdown();
  }

  public static void main(String[] args) throws Exception {
    String out = null;
    int files = 3000;
    long seed = 1;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--out" -> out = args[++i];
        case "--files" -> files = Integer.parseInt(args[++i]);
        case "--seed" -> seed = Long.parseLong(args[++i]);
        default -> {
          System.err.println("usage: HdfsImage --out DIR [--files N] [--seed S]");
          System.exit(2);
        }
      }
    }
    if (out == null) {
      System.err.println("hdfsimage: --out is required");
      System.exit(2);
    }
    File base = Files.createTempDirectory("hdfsimage").toFile();
    try (HdfsImage img = new HdfsImage(base)) {
      img.fill(files, seed);
      img.save(new File(out));
    } finally {
      org.apache.hadoop.fs.FileUtil.fullyDelete(base);
    }
    System.exit(0);
  }
}
