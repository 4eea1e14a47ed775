package io.strata.hadoop;

import io.strata.core.Features;
import io.strata.core.Features.AclChange;
import io.strata.core.Features.AclType;
import io.strata.core.StrataPath;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.hadoop.fs.BlockStoragePolicySpi;
import org.apache.hadoop.fs.StorageType;
import org.apache.hadoop.fs.XAttrSetFlag;
import org.apache.hadoop.fs.permission.AclEntry;
import org.apache.hadoop.fs.permission.AclEntryScope;
import org.apache.hadoop.fs.permission.AclEntryType;
import org.apache.hadoop.fs.permission.AclStatus;
import org.apache.hadoop.fs.permission.FsAction;
import org.apache.hadoop.fs.permission.FsPermission;

/**
 * HDFS's quotas, extended attributes, ACLs and storage policies in Hadoop's types, over the
 * core's {@link Features}: what {@link StrataFileSystem}'s overrides call. The service checks
 * every rule; its refusals are translated once, by the caller ({@link HadoopErrors}).
 */
final class HadoopFeatures {
  private final Features features;

  HadoopFeatures(Features features) {
    this.features = features;
  }

  void setQuota(StrataPath p, long names, long space) throws IOException {
    features.setQuota(p, names, space);
  }

  void setXAttr(StrataPath p, String name, byte[] value, EnumSet<XAttrSetFlag> flag)
      throws IOException {
    features.setXAttr(p, name, value, flag.contains(XAttrSetFlag.CREATE),
        flag.contains(XAttrSetFlag.REPLACE));
  }

  /** As HDFS: a missing attribute is an IOException (NO_XATTR, {@link HadoopErrors}). */
  byte[] getXAttr(StrataPath p, String name) throws IOException {
    return features.getXAttrs(p, List.of(name)).get(name);
  }

  /** HDFS's map: by name, the names compared as strings. */
  Map<String, byte[]> getXAttrs(StrataPath p, List<String> names) throws IOException {
    return new TreeMap<>(features.getXAttrs(p, names));
  }

  List<String> listXAttrs(StrataPath p) throws IOException {
    return features.listXAttrs(p);
  }

  void removeXAttr(StrataPath p, String name) throws IOException {
    features.removeXAttr(p, name);
  }

  void modifyAcl(StrataPath p, AclChange change, List<AclEntry> spec) throws IOException {
    List<Features.AclEntry> entries = new ArrayList<>();
    for (AclEntry e : spec) {
      FsAction a = e.getPermission();
      entries.add(new Features.AclEntry(e.getScope() == AclEntryScope.DEFAULT,
          AclType.valueOf(e.getType().name()), e.getName() == null ? "" : e.getName(),
          a == null ? 0 : a.ordinal()));
    }
    features.modifyAcl(p, change, entries);
  }

  AclStatus getAclStatus(StrataPath p) throws IOException {
    Features.AclStatus st = features.aclStatus(p);
    AclStatus.Builder b = new AclStatus.Builder().owner(st.owner()).group(st.group())
        .stickyBit((st.permission() & 01000) != 0)
        .setPermission(new FsPermission((short) (st.permission() & 01777)));
    for (Features.AclEntry e : st.entries()) {
      AclEntry.Builder eb = new AclEntry.Builder()
          .setScope(e.defaultScope() ? AclEntryScope.DEFAULT : AclEntryScope.ACCESS)
          .setType(AclEntryType.valueOf(e.type().name()))
          .setPermission(FsAction.values()[e.permission() & 7]);
      if (!e.name().isEmpty()) {
        eb.setName(e.name());
      }
      b.addEntry(eb.build());
    }
    return b.build();
  }

  void setStoragePolicy(StrataPath p, String name) throws IOException {
    features.setStoragePolicy(p, name);
  }

  BlockStoragePolicySpi getStoragePolicy(StrataPath p) throws IOException {
    return new Policy(features.storagePolicy(p));
  }

  Collection<? extends BlockStoragePolicySpi> getAllStoragePolicies() throws IOException {
    List<Policy> out = new ArrayList<>();
    for (Features.StoragePolicy sp : features.storagePolicies()) {
      out.add(new Policy(sp));
    }
    return out;
  }

  /**
   * A Strata storage policy as Hadoop's: its storage type is where its blocks live, RAM_DISK for
   * one pinned in the workers' caches, ARCHIVE for one written to the bucket only or in a
   * storage class of the bucket's, DISK otherwise (the cache in front of the bucket).
   */
  record Policy(Features.StoragePolicy policy) implements BlockStoragePolicySpi {
    @Override
    public String getName() {
      return policy.name();
    }

    @Override
    public StorageType[] getStorageTypes() {
      if (policy.pin()) {
        return new StorageType[] {StorageType.RAM_DISK};
      }
      if (policy.noCache() || !policy.storageClass().isEmpty()) {
        return new StorageType[] {StorageType.ARCHIVE};
      }
      return new StorageType[] {StorageType.DISK};
    }

    @Override
    public StorageType[] getCreationFallbacks() {
      return new StorageType[0];
    }

    @Override
    public StorageType[] getReplicationFallbacks() {
      return new StorageType[0];
    }

    @Override
    public boolean isCopyOnCreateFile() {
      return false;
    }

    @Override
    public String toString() {
      return "BlockStoragePolicy{" + policy.name() + ":" + policy.id() + ", storageTypes="
          + Arrays.toString(getStorageTypes()) + "}";
    }
  }
}
