package io.csi4j.sdk.testing;

import io.csi4j.proto.csi.CreateVolumeRequest;
import io.csi4j.proto.csi.VolumeCapability;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** Requests and waits the tests share. */
public final class Requests {
    private Requests() {}

    /** A valid CreateVolume for a mounted single-writer volume, with parameters as key, value, key, value... */
    public static CreateVolumeRequest create(String name, String... parameters) {
        var request = CreateVolumeRequest.newBuilder().setName(name)
                .addVolumeCapabilities(VolumeCapability.newBuilder()
                        .setMount(VolumeCapability.MountVolume.getDefaultInstance())
                        .setAccessMode(VolumeCapability.AccessMode.newBuilder()
                                .setMode(VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER)));
        for (int i = 0; i < parameters.length; i += 2) request.putParameters(parameters[i], parameters[i + 1]);
        return request.build();
    }

    /** Runs a blocking call on its own virtual thread (the common pool has one thread on a 2-core machine). */
    public static <T> CompletableFuture<T> async(Supplier<T> call) {
        CompletableFuture<T> future = new CompletableFuture<>();
        Thread.ofVirtual().start(() -> {
            try {
                future.complete(call.get());
            } catch (Throwable t) {
                future.completeExceptionally(t);
            }
        });
        return future;
    }

    public static void waitUntil(BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) throw new AssertionError("condition not reached in 10 s");
            Thread.sleep(5);
        }
    }
}
