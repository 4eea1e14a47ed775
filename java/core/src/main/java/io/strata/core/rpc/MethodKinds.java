package io.strata.core.rpc;

import io.grpc.MethodDescriptor;
import io.grpc.protobuf.ProtoMethodDescriptorSupplier;
import io.strata.proto.v1.Meta;
import io.strata.proto.v1.MetaServiceGrpc;
import io.strata.proto.v1.MethodKind;
import java.util.HashMap;
import java.util.Map;

/**
 * What the service's definition says of each MetaService method: its {@code
 * strata.v1.method_kind} option, which the service's table of operations agrees with (a test
 * of the service checks). A mutation's calls carry a request id, so that the service applies
 * one once however often it is resent, and go through the mutations' coalescer; a read's do
 * not. Nothing here is a hand-kept list: a method added to the proto is known by its option.
 */
public final class MethodKinds {
  private static final Map<String, MethodKind> KINDS = read();

  private MethodKinds() {}

  /** Whether calls of {@code m} are mutations. */
  public static boolean isMutation(MethodDescriptor<?, ?> m) {
    return kind(m) == MethodKind.METHOD_KIND_MUTATION;
  }

  /** The kind of {@code m}; METHOD_KIND_UNSPECIFIED for the service's own methods. */
  public static MethodKind kind(MethodDescriptor<?, ?> m) {
    MethodKind k = KINDS.get(m.getFullMethodName());
    if (k == null) {
      throw new IllegalArgumentException(m.getFullMethodName() + " is not a MetaService method");
    }
    return k;
  }

  private static Map<String, MethodKind> read() {
    Map<String, MethodKind> out = new HashMap<>();
    for (MethodDescriptor<?, ?> m : MetaServiceGrpc.getServiceDescriptor().getMethods()) {
      ProtoMethodDescriptorSupplier s = (ProtoMethodDescriptorSupplier) m.getSchemaDescriptor();
      out.put(m.getFullMethodName(),
          s.getMethodDescriptor().getOptions().getExtension(Meta.methodKind));
    }
    return Map.copyOf(out);
  }
}
