package io.csi4j.testkit.reference;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import java.nio.charset.StandardCharsets;
import java.util.function.Supplier;

/** Answers a unary call from a body that returns the response or throws a status. */
final class Rpc {
    private Rpc() {}

    static <T> void answer(StreamObserver<T> observer, Supplier<T> body) {
        T value;
        try {
            value = body.get();
        } catch (StatusRuntimeException e) {
            observer.onError(e);
            return;
        } catch (RuntimeException e) {
            observer.onError(Status.INTERNAL.withDescription(e.toString()).asRuntimeException());
            return;
        }
        observer.onNext(value);
        observer.onCompleted();
    }

    static StatusRuntimeException invalid(String message) { return Status.INVALID_ARGUMENT.withDescription(message).asRuntimeException(); }
    static StatusRuntimeException notFound(String message) { return Status.NOT_FOUND.withDescription(message).asRuntimeException(); }
    static StatusRuntimeException alreadyExists(String message) { return Status.ALREADY_EXISTS.withDescription(message).asRuntimeException(); }
    static StatusRuntimeException failedPrecondition(String message) { return Status.FAILED_PRECONDITION.withDescription(message).asRuntimeException(); }
    static StatusRuntimeException outOfRange(String message) { return Status.OUT_OF_RANGE.withDescription(message).asRuntimeException(); }
    static StatusRuntimeException aborted(String message) { return Status.ABORTED.withDescription(message).asRuntimeException(); }

    static StatusRuntimeException unimplemented() { return Status.UNIMPLEMENTED.withDescription("not offered by this configuration").asRuntimeException(); }

    static StatusRuntimeException resourceExhausted(String message) { return Status.RESOURCE_EXHAUSTED.withDescription(message).asRuntimeException(); }

    /** The general size limits of a map (4 KiB) and the charset of secret keys. */
    static void checkMap(java.util.Map<String, String> map, String field, boolean secret) {
        int size = map.entrySet().stream().mapToInt(e -> e.getKey().getBytes(StandardCharsets.UTF_8).length
                + e.getValue().getBytes(StandardCharsets.UTF_8).length).sum();
        if (size > 4096) throw invalid(field + " exceeds 4 KiB");
        if (secret && !map.keySet().stream().allMatch(k -> k.matches("[A-Za-z0-9._-]+"))) throw invalid(field + " has an invalid key");
    }

    static void require(boolean present, String field) {
        if (!present) throw invalid(field + " is required");
    }

    /** The spec's rule for CO-chosen names: at most 128 bytes, none of the banned control characters. */
    static void checkName(String name, String field) {
        require(!name.isEmpty(), field);
        if (name.getBytes(StandardCharsets.UTF_8).length > 128) throw invalid(field + " is longer than 128 bytes");
        for (char c : name.toCharArray()) {
            boolean banned = c <= 0x08 || c == 0x0B || c == 0x0C || (c >= 0x0E && c <= 0x1F) || (c >= 0x7F && c <= 0x9F);
            if (banned) throw invalid(field + " contains a control character");
        }
    }
}
