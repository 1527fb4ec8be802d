package io.csi4j.driver.cluster;

import io.csi4j.driver.csi.StorageStatus;
import io.csi4j.proto.cluster.PeerAgent;
import io.csi4j.sdk.CsiException;
import io.csi4j.sdk.interceptor.FailureTranslation;
import io.grpc.BindableService;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;

/**
 * The one place that chooses the code a node agent answers on csi4j.cluster.v1.NodeAgent. The controller passes an
 * agent's answer on to the CO as it is, so a domain or storage failure gets the code CSI gives it ({@link
 * StorageStatus}); and a copy's source node that failed is told in this node's answer: silence as UNAVAILABLE naming
 * the source node, anything else with the source node's own code and message.
 */
public final class AgentStatus {
    private AgentStatus() {}

    /** {@code e} as the agent's answer (code and message) when it is a domain or storage failure; else as it is. */
    public static RuntimeException toStatus(RuntimeException e) {
        return StorageStatus.toCsi(e);
    }

    /** The service with domain and storage failures mapped to the agent's answers. */
    public static BindableService wrap(BindableService service) {
        return FailureTranslation.wrap(service, AgentStatus::toStatus);
    }

    /** A copy's source node's failure, as this node answers the CreateVolume that needed it. */
    static CsiException fromSource(StatusRuntimeException e, PeerAgent source) {
        Status.Code code = e.getStatus().getCode();
        String description = e.getStatus().getDescription();
        if (code == Status.Code.UNAVAILABLE || code == Status.Code.DEADLINE_EXCEEDED || code == Status.Code.CANCELLED) {
            return CsiException.unavailable("node '" + source.getNodeId() + "' (" + source.getAddress()
                    + "), which holds the content source, did not answer: " + code + (description == null ? "" : ": " + description));
        }
        return new CsiException(code, "node '" + source.getNodeId() + "': " + (description == null ? code.name() : description));
    }
}
