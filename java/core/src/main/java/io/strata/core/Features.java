package io.strata.core;

import io.strata.core.error.Op;
import io.strata.proto.v1.AclEntryType;
import io.strata.proto.v1.AclOp;
import io.strata.proto.v1.GetAclStatusRequest;
import io.strata.proto.v1.GetAclStatusResponse;
import io.strata.proto.v1.GetStoragePoliciesRequest;
import io.strata.proto.v1.GetStoragePolicyRequest;
import io.strata.proto.v1.GetXAttrsRequest;
import io.strata.proto.v1.ListXAttrsRequest;
import io.strata.proto.v1.MetaServiceGrpc;
import io.strata.proto.v1.ModifyAclRequest;
import io.strata.proto.v1.RemoveXAttrRequest;
import io.strata.proto.v1.SetQuotaRequest;
import io.strata.proto.v1.SetStoragePolicyRequest;
import io.strata.proto.v1.SetXAttrRequest;
import io.strata.proto.v1.XAttr;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * HDFS's namespace features as the service keeps them (docs/semantics.md): quotas, extended
 * attributes, POSIX ACLs and storage policies. The service checks every rule; its refusals come
 * back as the core's exceptions ({@link io.strata.core.error.QuotaExceededException}, {@link
 * io.strata.core.error.AclException}, NO_XATTR as a plain {@link
 * io.strata.core.error.StrataException}).
 */
public final class Features {
  private final StrataClient client;

  Features(StrataClient client) {
    this.client = client;
  }

  /** A limit not set (HDFS's QUOTA_RESET); {@link #QUOTA_DONT_SET} leaves a limit as it is. */
  public static final long NO_QUOTA = -1;

  /** HDFS's QUOTA_DONT_SET. */
  public static final long QUOTA_DONT_SET = Long.MAX_VALUE;

  /** Sets directory {@code p}'s name and space quotas (a superuser's call). */
  public void setQuota(StrataPath p, long names, long space) throws IOException {
    SetQuotaRequest req = SetQuotaRequest.newBuilder()
        .setHeader(client.header(MetaServiceGrpc.getSetQuotaMethod(), p.namespace()))
        .setPath(p.path()).setNames(names).setSpace(space).build();
    client.call(Op.SET_QUOTA, p, u -> u.call(MetaServiceGrpc.getSetQuotaMethod(), req));
  }

  /**
   * Sets attribute {@code name} of {@code p} to {@code value}; {@code create} and {@code
   * replace} are HDFS's flags (neither: either is allowed).
   */
  public void setXAttr(StrataPath p, String name, byte[] value, boolean create, boolean replace)
      throws IOException {
    SetXAttrRequest req = SetXAttrRequest.newBuilder()
        .setHeader(client.header(MetaServiceGrpc.getSetXAttrMethod(), p.namespace()))
        .setPath(p.path()).setXattr(XAttr.newBuilder().setName(name)
            .setValue(com.google.protobuf.ByteString.copyFrom(value == null ? new byte[0] : value)))
        .setCreate(create).setReplace(replace).build();
    client.call(Op.SET_XATTR, p, u -> u.call(MetaServiceGrpc.getSetXAttrMethod(), req));
  }

  /** Removes attribute {@code name} of {@code p}. */
  public void removeXAttr(StrataPath p, String name) throws IOException {
    RemoveXAttrRequest req = RemoveXAttrRequest.newBuilder()
        .setHeader(client.header(MetaServiceGrpc.getRemoveXAttrMethod(), p.namespace()))
        .setPath(p.path()).setName(name).build();
    client.call(Op.REMOVE_XATTR, p, u -> u.call(MetaServiceGrpc.getRemoveXAttrMethod(), req));
  }

  /**
   * Returns the attributes of {@code p} called {@code names} with their values, or every one the
   * caller may see if {@code names} is empty, by name in order.
   */
  public Map<String, byte[]> getXAttrs(StrataPath p, List<String> names) throws IOException {
    GetXAttrsRequest req = GetXAttrsRequest.newBuilder()
        .setHeader(client.header(MetaServiceGrpc.getGetXAttrsMethod(), p.namespace()))
        .setPath(p.path()).addAllNames(names).build();
    Map<String, byte[]> out = new LinkedHashMap<>();
    for (XAttr x : client.call(Op.GET_XATTRS, p,
        u -> u.call(MetaServiceGrpc.getGetXAttrsMethod(), req)).getXattrsList()) {
      out.put(x.getName(), x.getValue().toByteArray());
    }
    return out;
  }

  /** Returns the names of the attributes of {@code p} the caller may see. */
  public List<String> listXAttrs(StrataPath p) throws IOException {
    ListXAttrsRequest req = ListXAttrsRequest.newBuilder()
        .setHeader(client.header(MetaServiceGrpc.getListXAttrsMethod(), p.namespace()))
        .setPath(p.path()).build();
    return new ArrayList<>(client.call(Op.GET_XATTRS, p,
        u -> u.call(MetaServiceGrpc.getListXAttrsMethod(), req)).getNamesList());
  }

  /** An ACL entry's type, as HDFS's AclEntryType. */
  public enum AclType {
    USER, GROUP, MASK, OTHER
  }

  /**
   * One entry of an ACL.
   *
   * @param defaultScope of a directory's default ACL
   * @param type its type
   * @param name the named user or group; empty for the unnamed entries
   * @param permission rwx bits
   */
  public record AclEntry(boolean defaultScope, AclType type, String name, int permission) {}

  /**
   * HDFS's AclStatus: the entries the mode bits do not hold (named entries and the owning group of
   * an extended access ACL, whose mask is then the permission's group bits; every default entry),
   * sorted.
   */
  public record AclStatus(String owner, String group, int permission, List<AclEntry> entries) {}

  /** What {@link #modifyAcl} does: HDFS's five calls. */
  public enum AclChange {
    SET(AclOp.ACL_OP_SET), MODIFY(AclOp.ACL_OP_MODIFY), REMOVE_ENTRIES(AclOp.ACL_OP_REMOVE_ENTRIES),
    REMOVE_DEFAULT(AclOp.ACL_OP_REMOVE_DEFAULT), REMOVE(AclOp.ACL_OP_REMOVE);

    private final AclOp op;

    AclChange(AclOp op) {
      this.op = op;
    }
  }

  /** Changes the ACL of {@code p}: only its owner or a superuser may. */
  public void modifyAcl(StrataPath p, AclChange change, List<AclEntry> entries)
      throws IOException {
    ModifyAclRequest.Builder b = ModifyAclRequest.newBuilder()
        .setHeader(client.header(MetaServiceGrpc.getModifyAclMethod(), p.namespace()))
        .setPath(p.path()).setOp(change.op);
    for (AclEntry e : entries) {
      b.addEntries(io.strata.proto.v1.AclEntry.newBuilder().setDefaultScope(e.defaultScope())
          .setType(AclEntryType.forNumber(e.type().ordinal() + 1)).setName(e.name())
          .setPermission(e.permission()));
    }
    ModifyAclRequest req = b.build();
    client.call(Op.MODIFY_ACL, p, u -> u.call(MetaServiceGrpc.getModifyAclMethod(), req));
  }

  /** Returns the ACL of {@code p}. */
  public AclStatus aclStatus(StrataPath p) throws IOException {
    GetAclStatusRequest req = GetAclStatusRequest.newBuilder()
        .setHeader(client.header(MetaServiceGrpc.getGetAclStatusMethod(), p.namespace()))
        .setPath(p.path()).build();
    GetAclStatusResponse r = client.call(Op.GET_ACL_STATUS, p,
        u -> u.call(MetaServiceGrpc.getGetAclStatusMethod(), req));
    List<AclEntry> entries = new ArrayList<>();
    for (io.strata.proto.v1.AclEntry e : r.getEntriesList()) {
      entries.add(new AclEntry(e.getDefaultScope(), AclType.values()[e.getTypeValue() - 1],
          e.getName(), e.getPermission() & 7));
    }
    return new AclStatus(r.getOwner(), r.getGroup(), r.getPermission(), entries);
  }

  /**
   * A storage policy of the service.
   *
   * @param id its number (0 never: that is "none set")
   * @param name its name, as HOT
   * @param pin its blocks are pinned in the workers' caches
   * @param noCache its blocks are written to the bucket only
   * @param storageClass the bucket's storage class of its blocks; empty for the default
   * @param description what it does, in words
   */
  public record StoragePolicy(int id, String name, boolean pin, boolean noCache,
      String storageClass, String description) {
    static StoragePolicy of(io.strata.proto.v1.StoragePolicy p) {
      return new StoragePolicy(p.getId(), p.getName(), p.getPin(), p.getNoCache(),
          p.getStorageClass(), p.getDescription());
    }
  }

  /** Sets the storage policy of {@code p} by name; an empty name unsets it. */
  public void setStoragePolicy(StrataPath p, String policy) throws IOException {
    SetStoragePolicyRequest req = SetStoragePolicyRequest.newBuilder()
        .setHeader(client.header(MetaServiceGrpc.getSetStoragePolicyMethod(), p.namespace()))
        .setPath(p.path()).setPolicy(policy).build();
    client.call(Op.SET_STORAGE_POLICY, p,
        u -> u.call(MetaServiceGrpc.getSetStoragePolicyMethod(), req));
  }

  /** Returns the effective storage policy of {@code p}: its own or its nearest directory's. */
  public StoragePolicy storagePolicy(StrataPath p) throws IOException {
    GetStoragePolicyRequest req = GetStoragePolicyRequest.newBuilder()
        .setHeader(client.header(MetaServiceGrpc.getGetStoragePolicyMethod(), p.namespace()))
        .setPath(p.path()).build();
    return StoragePolicy.of(client.call(Op.GET_STORAGE_POLICY, p,
        u -> u.call(MetaServiceGrpc.getGetStoragePolicyMethod(), req)).getPolicy());
  }

  /** Returns every storage policy of the service. */
  public List<StoragePolicy> storagePolicies() throws IOException {
    StrataPath root = StrataPath.root("");
    GetStoragePoliciesRequest req = GetStoragePoliciesRequest.newBuilder()
        .setHeader(client.header(MetaServiceGrpc.getGetStoragePoliciesMethod(), "")).build();
    List<StoragePolicy> out = new ArrayList<>();
    for (io.strata.proto.v1.StoragePolicy p : client.call(Op.GET_STORAGE_POLICY, root,
        u -> u.call(MetaServiceGrpc.getGetStoragePoliciesMethod(), req)).getPoliciesList()) {
      out.add(StoragePolicy.of(p));
    }
    return out;
  }
}
