package io.csi4j.sdk.interceptor;

import java.util.Collection;

/**
 * The objects one request operates on, as keys for the {@link InFlightGuard}: e.g. {@code volume vol-1}. Keys
 * should read well in an error message ("an operation is pending for volume vol-1"). An empty result means
 * the request is not guarded (reads, capability queries).
 */
@FunctionalInterface
public interface KeyExtractor<ReqT> {
    Collection<String> keys(ReqT request);
}
