package io.csi4j.driver.addons;

import io.csi4j.driver.csi.StorageStatus;
import io.csi4j.sdk.interceptor.FailureTranslation;
import io.grpc.BindableService;

/**
 * The one place that chooses the CSI-Addons code of a domain or storage failure. The CSI-Addons specs
 * (identity, volumegroup, reclaimspace) name the codes of csi.v1 for the same failures (NOT_FOUND for an unknown
 * group or volume, FAILED_PRECONDITION for a group still in use, ...), so this edge answers what the CSI edge
 * answers; a failure CSI-Addons wants told otherwise is mapped here, before the call to {@link StorageStatus}.
 */
public final class AddonsStatus {
    private AddonsStatus() {}

    /** {@code e} as the CSI-Addons answer (code and message) when it is a domain or storage failure; else as it is. */
    public static RuntimeException toStatus(RuntimeException e) {
        return StorageStatus.toCsi(e);
    }

    /** The service with domain and storage failures mapped to CSI-Addons answers. */
    public static BindableService wrap(BindableService service) {
        return FailureTranslation.wrap(service, AddonsStatus::toStatus);
    }
}
