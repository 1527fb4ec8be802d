package io.csi4j.driver.cluster;

import io.grpc.stub.ServerCallStreamObserver;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * Flow control for a server stream written from a blocking thread: {@link #awaitReady} returns once the receiver can
 * take another message. gRPC's onReady wakes it; a short poll bounds what a missed signal costs (onReady may come
 * before the writer looks again, and it never comes while the writer is the handler's own thread).
 */
final class ReadyGate {
    private final ServerCallStreamObserver<?> call;
    private final Semaphore ready = new Semaphore(0);

    /** Must be made before the handler returns (gRPC takes the handlers only then). */
    ReadyGate(ServerCallStreamObserver<?> call) {
        this.call = call;
        call.setOnReadyHandler(ready::release);
        call.setOnCancelHandler(ready::release);
    }

    /** True when the call can take a message; false once the client cancelled it. */
    boolean awaitReady() throws InterruptedException {
        while (!call.isReady()) {
            if (call.isCancelled()) return false;
            ready.tryAcquire(1, TimeUnit.MILLISECONDS);
        }
        return true;
    }
}
