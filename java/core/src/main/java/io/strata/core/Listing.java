package io.strata.core;

import io.strata.core.error.Op;
import io.strata.proto.v1.FileStatus;
import io.strata.proto.v1.FileType;
import io.strata.proto.v1.ListRequest;
import io.strata.proto.v1.ListResponse;
import io.strata.proto.v1.MetaServiceGrpc;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * The entries of a directory in name order, fetched one page at a time after a cursor (the last
 * name seen), so that a directory of any size streams in bounded memory. A file lists as itself.
 * The first page is fetched at construction, so a missing path fails there. Not safe for
 * concurrent use.
 *
 * <p>Round trips overlap the caller's work: while the caller takes a page's entries, the next
 * page is on its way, and once it has taken them all, the directories among them are announced
 * to the client's {@link ListPrefetch}, which asks for their first pages ahead of their listings
 * (a first page may come from there).
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
  private final ListPrefetch prefetch;
  private Iterator<FileStatus> page;
  private boolean hasMore;
  private String cursor = "";
  /** The next page, asked for while the caller takes this one; null if not asked. */
  private CompletableFuture<ListResponse> next;
  /** The directories the caller was shown, announced to prefetch at the end; null after. */
  private List<StrataPath> subdirs = new ArrayList<>();

  Listing(StrataClient client, StrataPath path, int pageSize, ListPrefetch prefetch)
      throws IOException {
    this.client = client;
    this.path = path;
    this.pageSize = pageSize;
    this.prefetch = prefetch;
    ListResponse first = prefetch.take(path);
    if (first == null) {
      first = fetch(cursor);
    }
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
      accept(nextPage());
    }
    if (page.hasNext()) {
      return true;
    }
    if (subdirs != null) {
      prefetch.announce(subdirs);
      subdirs = null;
    }
    return false;
  }

  @Override
  public FileInfo next() throws IOException {
    if (!hasNext()) {
      throw new NoSuchElementException("no more entries in " + path);
    }
    FileStatus st = page.next();
    StrataPath child = dir.child(st.getName());
    if (st.getType() == FileType.FILE_TYPE_DIRECTORY && subdirs != null
        && subdirs.size() < MAX_ANNOUNCED) {
      subdirs.add(child);
    }
    return FileInfo.of(child, st);
  }

  /** The most directories one listing announces. */
  private static final int MAX_ANNOUNCED = 1024;

  /** The page after the cursor: the one asked for ahead if any, else asked for now. */
  private ListResponse nextPage() throws IOException {
    CompletableFuture<ListResponse> f = next;
    next = null;
    if (f == null) {
      return fetch(cursor);
    }
    try {
      return f.get();
    } catch (ExecutionException e) {
      if (e.getCause() instanceof ListPrefetch.Failed failed) {
        throw (IOException) failed.getCause();
      }
      throw new IOException("list " + path + ": " + e.getCause(), e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new java.io.InterruptedIOException("list " + path + ": interrupted");
    }
  }

  private ListResponse fetch(String after) throws IOException {
    return fetch(client, path, after, pageSize);
  }

  /** One page of {@code path}'s listing: the entries after {@code after}. */
  static ListResponse fetch(StrataClient client, StrataPath path, String after, int pageSize)
      throws IOException {
    ListRequest req = ListRequest.newBuilder()
        .setHeader(client.header(MetaServiceGrpc.getListMethod(), path.namespace()))
        .setPath(path.path()).setStartAfter(after).setLimit(pageSize).build();
    return client.call(Op.LIST, path, u -> u.call(MetaServiceGrpc.getListMethod(), req));
  }

  private void accept(ListResponse r) {
    page = r.getEntriesList().iterator();
    // An empty page ends the listing even if it claims more: a cursor that stops moving
    // would loop forever.
    hasMore = r.getHasMore() && r.getEntriesCount() > 0;
    if (r.getEntriesCount() > 0) {
      cursor = r.getEntries(r.getEntriesCount() - 1).getName();
    }
    if (hasMore) {
      next = prefetch.ahead(path, cursor);
    }
  }
}
