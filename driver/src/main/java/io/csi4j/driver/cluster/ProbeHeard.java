package io.csi4j.driver.cluster;

import io.csi4j.proto.csi.IdentityGrpc;
import io.grpc.BindableService;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import java.util.List;

/**
 * On a node agent's port, the controller's heartbeat (csi.v1.Identity/Probe, every second) is what tells the agent it
 * has not been away: each one is reported to {@code heard} (replication/PrimaryConfirmations: a gap of the failover
 * delay unconfirms its primaries). Only the agent's port: the kubelet's probes on the CSI socket say nothing about
 * the controller.
 */
public final class ProbeHeard {
    private ProbeHeard() {}

    /** {@code services} with the Identity service's Probe reported to {@code heard} before it is answered. */
    public static List<BindableService> wrap(List<BindableService> services, Runnable heard) {
        ServerInterceptor interceptor = new ServerInterceptor() {
            @Override
            public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers, ServerCallHandler<Q, A> next) {
                if (call.getMethodDescriptor().getFullMethodName().equals(IdentityGrpc.getProbeMethod().getFullMethodName())) heard.run();
                return next.startCall(call, headers);
            }
        };
        return services.stream().map(s -> {
            var bound = s.bindService();
            if (!bound.getServiceDescriptor().getName().equals(IdentityGrpc.SERVICE_NAME)) return s;
            return (BindableService) () -> ServerInterceptors.intercept(bound, interceptor);
        }).toList();
    }
}
