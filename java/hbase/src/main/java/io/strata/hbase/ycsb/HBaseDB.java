package io.strata.hbase.ycsb;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.Vector;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import site.ycsb.ByteArrayByteIterator;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.Status;

/**
 * YCSB's HBase binding (the project's own: YCSB publishes only its core on Maven Central), as
 * YCSB's hbase2 binding behaves by default: one column family, a field per column, every put
 * sent at once (no client-side buffering) with the table's durability (the log synced before
 * HBase acknowledges), scans of {@code recordcount} rows from the start key. One instance per
 * client thread, over a connection the threads share.
 */
public final class HBaseDB extends DB {
  private final Connection connection;
  private final byte[] family;
  private Table table;
  private String tableName;

  /** A client of {@code connection}'s cluster, writing column family {@code family}. */
  public HBaseDB(Connection connection, String family) {
    this.connection = connection;
    this.family = bytes(family);
  }

  private Table table(String name) throws IOException {
    if (table == null || !name.equals(tableName)) {
      if (table != null) {
        table.close();
      }
      table = connection.getTable(TableName.valueOf(name));
      tableName = name;
    }
    return table;
  }

  @Override
  public void cleanup() {
    try {
      if (table != null) {
        table.close();
      }
    } catch (IOException e) {
      System.err.println("ycsb: closing the table: " + e);
    }
  }

  @Override
  public Status read(String tbl, String key, Set<String> fields,
      Map<String, ByteIterator> result) {
    Get g = new Get(bytes(key));
    if (fields == null) {
      g.addFamily(family);
    } else {
      for (String f : fields) {
        g.addColumn(family, bytes(f));
      }
    }
    try {
      Result r = table(tbl).get(g);
      if (r.isEmpty()) {
        return Status.NOT_FOUND;
      }
      copy(r, result);
      return Status.OK;
    } catch (IOException e) {
      return failed("read", key, e);
    }
  }

  @Override
  public Status scan(String tbl, String startkey, int recordcount, Set<String> fields,
      Vector<HashMap<String, ByteIterator>> result) {
    Scan s = new Scan().withStartRow(bytes(startkey)).setLimit(recordcount)
        .setCaching(Math.min(recordcount, 100));
    if (fields == null) {
      s.addFamily(family);
    } else {
      for (String f : fields) {
        s.addColumn(family, bytes(f));
      }
    }
    try (ResultScanner rs = table(tbl).getScanner(s)) {
      for (Result r : rs) {
        HashMap<String, ByteIterator> row = new HashMap<>();
        copy(r, row);
        result.add(row);
      }
      return Status.OK;
    } catch (IOException e) {
      return failed("scan", startkey, e);
    }
  }

  @Override
  public Status update(String tbl, String key, Map<String, ByteIterator> values) {
    return put("update", tbl, key, values);
  }

  @Override
  public Status insert(String tbl, String key, Map<String, ByteIterator> values) {
    return put("insert", tbl, key, values);
  }

  private Status put(String op, String tbl, String key, Map<String, ByteIterator> values) {
    Put p = new Put(bytes(key));
    for (Map.Entry<String, ByteIterator> e : values.entrySet()) {
      p.addColumn(family, bytes(e.getKey()), e.getValue().toArray());
    }
    try {
      table(tbl).put(p);
      return Status.OK;
    } catch (IOException e) {
      return failed(op, key, e);
    }
  }

  @Override
  public Status delete(String tbl, String key) {
    try {
      table(tbl).delete(new Delete(bytes(key)));
      return Status.OK;
    } catch (IOException e) {
      return failed("delete", key, e);
    }
  }

  private void copy(Result r, Map<String, ByteIterator> into) {
    NavigableMap<byte[], byte[]> cols = r.getFamilyMap(family);
    for (Map.Entry<byte[], byte[]> c : cols.entrySet()) {
      into.put(new String(c.getKey(), StandardCharsets.UTF_8),
          new ByteArrayByteIterator(c.getValue()));
    }
  }

  private static Status failed(String op, String key, IOException e) {
    System.err.println("ycsb: " + op + " " + key + ": " + e);
    return Status.ERROR;
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
