package io.strata.core;

import io.strata.core.error.Op;
import io.strata.proto.v1.FileStatus;
import io.strata.proto.v1.FileType;
import io.strata.proto.v1.ListRequest;
import io.strata.proto.v1.ListResponse;
import io.strata.proto.v1.MetaServiceGrpc;
import java.io.IOException;
import java.util.Iterator;
import java.util.NoSuchElementException;

/**
 * The entries of a directory in name order, fetched one page at a time after a cursor (the last
 * name seen), so that a directory of any size streams in bounded memory. A file lists as itself.
 * The first page is fetched at construction, so a missing path fails there. Not safe for
 * concurrent use.
 *
 * <p>NB: pages are separate reads; entries created or removed between them may or may not
 * appear, but none appears twice and the order holds (the cursor is a name).
 */
final class Listing implements IOIterator<FileInfo> {
  private final StrataClient client;
  private final StrataPath path;
  private final int pageSize;
  private final FileInfo status;
  private final StrataPath dir;
  private Iterator<FileStatus> page;
  private boolean hasMore;
  private String cursor = "";

  Listing(StrataClient client, StrataPath path, int pageSize) throws IOException {
    this.client = client;
    this.path = path;
    this.pageSize = pageSize;
    ListResponse first = fetch();
    boolean isDir = first.getStatus().getType() == FileType.FILE_TYPE_DIRECTORY;
    this.dir = isDir ? path : path.parent();
    this.status = FileInfo.of(path, first.getStatus());
    accept(first);
  }

  /** The status of the listed path itself. */
  FileInfo status() {
    return status;
  }

  @Override
  public boolean hasNext() throws IOException {
    while (!page.hasNext() && hasMore) {
      accept(fetch());
    }
    return page.hasNext();
  }

  @Override
  public FileInfo next() throws IOException {
    if (!hasNext()) {
      throw new NoSuchElementException("no more entries in " + path);
    }
    FileStatus st = page.next();
    return FileInfo.of(dir.child(st.getName()), st);
  }

  private ListResponse fetch() throws IOException {
    ListRequest req = ListRequest.newBuilder()
        .setHeader(client.header(MetaServiceGrpc.getListMethod(), path.namespace()))
        .setPath(path.path()).setStartAfter(cursor).setLimit(pageSize).build();
    return client.call(Op.LIST, path, s -> s.list(req));
  }

  private void accept(ListResponse r) {
    page = r.getEntriesList().iterator();
    // An empty page ends the listing even if it claims more: a cursor that stops moving
    // would loop forever.
    hasMore = r.getHasMore() && r.getEntriesCount() > 0;
    if (r.getEntriesCount() > 0) {
      cursor = r.getEntries(r.getEntriesCount() - 1).getName();
    }
  }
}
