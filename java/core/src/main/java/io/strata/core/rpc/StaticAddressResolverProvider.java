package io.strata.core.rpc;

import io.grpc.EquivalentAddressGroup;
import io.grpc.NameResolver;
import io.grpc.NameResolverProvider;
import io.grpc.Status;
import io.grpc.StatusOr;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.URI;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * Resolves {@code strata-static:///host1:port1,host2:port2} to those addresses, so that one
 * channel can reach any member of a namespace service group. Host names are looked up again on
 * every refresh (after a connection failure), so a member that moves is found.
 */
final class StaticAddressResolverProvider extends NameResolverProvider {
  static final String SCHEME = "strata-static";

  @Override
  protected boolean isAvailable() {
    return true;
  }

  @Override
  protected int priority() {
    return 5;
  }

  @Override
  public String getDefaultScheme() {
    return SCHEME;
  }

  @Override
  public Collection<Class<? extends SocketAddress>> getProducedSocketAddressTypes() {
    return List.of(InetSocketAddress.class);
  }

  @Override
  public NameResolver newNameResolver(URI target, NameResolver.Args args) {
    if (!SCHEME.equals(target.getScheme())) {
      return null;
    }
    String path = target.getPath();
    List<HostPort> members = new ArrayList<>();
    for (String a : path.substring(path.startsWith("/") ? 1 : 0).split(",")) {
      members.add(HostPort.parse(a));
    }
    return new Resolver(members);
  }

  private static final class Resolver extends NameResolver {
    private final List<HostPort> members;
    private Listener2 listener;

    Resolver(List<HostPort> members) {
      this.members = members;
    }

    @Override
    public String getServiceAuthority() {
      return members.get(0).toString();
    }

    @Override
    public void start(Listener2 l) {
      this.listener = l;
      resolve();
    }

    @Override
    public void refresh() {
      resolve();
    }

    private void resolve() {
      List<EquivalentAddressGroup> groups = new ArrayList<>();
      for (HostPort m : members) {
        InetSocketAddress a = new InetSocketAddress(m.host(), m.port());
        if (!a.isUnresolved()) {
          groups.add(new EquivalentAddressGroup(a));
        }
      }
      if (groups.isEmpty()) {
        listener.onError(Status.UNAVAILABLE.withDescription("cannot resolve " + members));
        return;
      }
      listener.onResult(ResolutionResult.newBuilder()
          .setAddressesOrError(StatusOr.fromValue(groups)).build());
    }

    @Override
    public void shutdown() {}
  }
}
