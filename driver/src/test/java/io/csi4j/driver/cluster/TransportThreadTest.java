package io.csi4j.driver.cluster;

import static org.junit.jupiter.api.Assertions.*;

import io.csi4j.sdk.CsiException;
import io.grpc.Context;
import io.grpc.stub.StreamObserver;
import io.netty.util.concurrent.DefaultEventExecutor;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class TransportThreadTest {
    private static final Context.Key<String> CALL = Context.key("call");
    private final DefaultEventExecutor loop = new DefaultEventExecutor();

    @AfterEach
    void stop() {
        loop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }

    /** Collects what reaches the server call's observer. */
    private static final class Outcome implements StreamObserver<Object> {
        final CompletableFuture<Throwable> error = new CompletableFuture<>();

        @Override public void onNext(Object value) {}
        @Override public void onError(Throwable t) { error.complete(t); }
        @Override public void onCompleted() {}
    }

    @Test
    void aRoutingThatWaitsRunsAgainOnAVirtualThreadWithTheCallsContext() throws Exception {
        List<Thread> ran = new CopyOnWriteArrayList<>();
        var waitedOn = new CompletableFuture<String>();
        loop.submit(() -> Context.current().withValue(CALL, "c1").run(() -> TransportThread.route(new Outcome(), () -> {
            ran.add(Thread.currentThread());
            TransportThread.mayWait();
            waitedOn.complete(Thread.currentThread().isVirtual() + " " + CALL.get());
        }))).get(10, TimeUnit.SECONDS);
        assertEquals("true c1", waitedOn.get(10, TimeUnit.SECONDS));
        assertEquals(2, ran.size(), "once on the event loop up to the wait, then again from the start");
        assertFalse(ran.getFirst().isVirtual());
    }

    @Test
    void aRoutingThatDoesNotWaitStaysOnTheEventLoop() throws Exception {
        List<Thread> ran = new CopyOnWriteArrayList<>();
        Thread loopThread = loop.submit(() -> {
            TransportThread.route(new Outcome(), () -> ran.add(Thread.currentThread()));
            return Thread.currentThread();
        }).get(10, TimeUnit.SECONDS);
        assertEquals(List.of(loopThread), ran);
        assertTrue(loop.submit(TransportThread::current).get(10, TimeUnit.SECONDS));
    }

    @Test
    void outsideAnEventLoopNothingHops() {
        List<Thread> ran = new CopyOnWriteArrayList<>();
        TransportThread.route(new Outcome(), () -> {
            TransportThread.mayWait();
            ran.add(Thread.currentThread());
        });
        assertEquals(List.of(Thread.currentThread()), ran);
        assertFalse(TransportThread.current());
    }

    @Test
    void aFailureAfterTheHopReachesTheCall() throws Exception {
        var outcome = new Outcome();
        loop.submit(() -> TransportThread.route(outcome, () -> {
            TransportThread.mayWait();
            throw CsiException.unavailable("node 'n1' (10.0.0.1:7443) did not answer");
        })).get(10, TimeUnit.SECONDS);
        var error = outcome.error.get(10, TimeUnit.SECONDS);
        assertInstanceOf(CsiException.class, error);
        assertTrue(error.getMessage().contains("node 'n1'"), error.getMessage());
    }

    @Test
    void aFailureBeforeAnyWaitIsThrownToTheHandler() throws Exception {
        var thrown = loop.submit(() -> {
            try {
                TransportThread.route(new Outcome(), () -> { throw CsiException.notFound("volume v names node 'x'"); });
                return null;
            } catch (CsiException e) {
                return e;
            }
        }).get(10, TimeUnit.SECONDS);
        assertNotNull(thrown, "the handler throws it, as before: the interceptors map it");
    }
}
