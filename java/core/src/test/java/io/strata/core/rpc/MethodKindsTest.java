package io.strata.core.rpc;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import io.grpc.MethodDescriptor;
import io.strata.proto.v1.MetaServiceGrpc;
import io.strata.proto.v1.MethodKind;
import io.strata.proto.v1.WorkerServiceGrpc;
import org.junit.Test;

/** {@link MethodKinds} reads each method's kind off the service's definition. */
public class MethodKindsTest {
  @Test
  public void mutationsReadsAndTheServicesOwn() {
    for (MethodDescriptor<?, ?> m : new MethodDescriptor<?, ?>[] {
        MetaServiceGrpc.getMkdirsMethod(), MetaServiceGrpc.getCreateMethod(),
        MetaServiceGrpc.getCompleteMethod(), MetaServiceGrpc.getRenameMethod(),
        MetaServiceGrpc.getDeleteMethod(), MetaServiceGrpc.getRecoverLeaseMethod()}) {
      assertTrue(m.getFullMethodName(), MethodKinds.isMutation(m));
    }
    for (MethodDescriptor<?, ?> m : new MethodDescriptor<?, ?>[] {
        MetaServiceGrpc.getGetFileStatusMethod(), MetaServiceGrpc.getOpenMethod(),
        MetaServiceGrpc.getListMethod(), MetaServiceGrpc.getGetContentSummaryMethod()}) {
      assertEquals(m.getFullMethodName(), MethodKind.METHOD_KIND_READ, MethodKinds.kind(m));
    }
    assertFalse(MethodKinds.isMutation(MetaServiceGrpc.getRenewLeaseMethod()));
    assertFalse(MethodKinds.isMutation(MetaServiceGrpc.getGetServerDefaultsMethod()));
    assertEquals(MethodKind.METHOD_KIND_UNSPECIFIED,
        MethodKinds.kind(MetaServiceGrpc.getBatchMethod()));
  }

  @Test
  public void everyMethodOfTheServiceHasAKind() {
    for (MethodDescriptor<?, ?> m : MetaServiceGrpc.getServiceDescriptor().getMethods()) {
      MethodKinds.kind(m);
    }
    assertThrows(IllegalArgumentException.class,
        () -> MethodKinds.kind(WorkerServiceGrpc.getWriteMethod()));
  }
}
