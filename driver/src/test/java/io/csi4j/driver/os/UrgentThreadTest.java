package io.csi4j.driver.os;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.testing.Privileged;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A cut's freeze window runs its thread real-time ({@link UrgentThread}): the kernel's own account of the thread
 * (/proc/thread-self/stat: rt_priority, policy) says SCHED_FIFO 1 inside and what it was after, a process started
 * inside is not real-time (reset on fork), a nice value survives, and a virtual thread is left alone.
 */
class UrgentThreadTest {
    private static final int SCHED_OTHER = 0;
    private static final int SCHED_FIFO = 1;

    @Test
    void aPlatformThreadRunsRealTimeInsideAndAsBeforeAfter() throws Exception {
        Privileged.requireRoot();
        on(Thread.ofPlatform(), () -> {
            assertEquals(new Sched(SCHED_OTHER, 0), Sched.ofThisThread());
            int nice = Sched.niceOfThisThread();
            try (UrgentThread urgent = UrgentThread.enter()) {
                assertTrue(urgent.raised(), urgent.describe());
                assertEquals("real-time", urgent.describe());
                assertEquals(new Sched(SCHED_FIFO, 1), Sched.ofThisThread());
                // SCHED_RESET_ON_FORK: a process started by the raised thread is an ordinary one
                Process child = new ProcessBuilder("sh", "-c", "cut -d' ' -f40,41 /proc/self/stat").start();
                String childSched = new String(child.getInputStream().readAllBytes()).trim();
                assertEquals(0, child.waitFor());
                assertEquals("0 0", childSched, "the child's rt_priority and policy");
            }
            assertEquals(new Sched(SCHED_OTHER, 0), Sched.ofThisThread());
            assertEquals(nice, Sched.niceOfThisThread(), "the nice value kept");
        });
    }

    @Test
    void aVirtualThreadIsNotRaisedNorItsCarrier() throws Exception {
        on(Thread.ofVirtual(), () -> {
            try (UrgentThread urgent = UrgentThread.enter()) {
                assertFalse(urgent.raised());
                assertTrue(urgent.describe().contains("virtual"), urgent.describe());
                assertEquals(SCHED_OTHER, Sched.ofThisThread().policy(), "the carrier stays ordinary");
            }
        });
    }

    @Test
    void aVirtualCallersStretchRunsOnARaisedPlatformThreadAndItsFailureReachesTheCaller() throws Exception {
        Privileged.requireRoot();
        on(Thread.ofVirtual(), () -> {
            // the agents serve calls on virtual threads: the freeze window must still run real-time
            Sched inside = UrgentThread.call(true, urgent -> {
                assertTrue(urgent.raised(), urgent.describe());
                assertFalse(Thread.currentThread().isVirtual());
                return Sched.uncheckedOfThisThread();
            });
            assertEquals(new Sched(SCHED_FIFO, 1), inside);
            IllegalStateException thrown = assertThrows(IllegalStateException.class,
                    () -> UrgentThread.call(true, urgent -> { throw new IllegalStateException("inside"); }));
            assertEquals("inside", thrown.getMessage());
            // not asked: on the caller's own thread, as it is
            assertEquals("as it is", UrgentThread.call(false, urgent -> {
                assertFalse(urgent.raised());
                assertTrue(Thread.currentThread().isVirtual());
                return "as it is";
            }));
        });
    }

    @Test
    void closingTwiceIsOnceAndNotRaisedChangesNothing() throws Exception {
        Privileged.requireRoot();
        on(Thread.ofPlatform(), () -> {
            UrgentThread urgent = UrgentThread.enter();
            urgent.close();
            urgent.close();
            assertEquals(new Sched(SCHED_OTHER, 0), Sched.ofThisThread());
            try (UrgentThread not = UrgentThread.notRaised("asked so")) {
                assertFalse(not.raised());
                assertEquals("normal priority (asked so)", not.describe());
                assertEquals(new Sched(SCHED_OTHER, 0), Sched.ofThisThread());
            }
        });
    }

    /** The body run on a thread of that kind, its failure this test's. */
    private static void on(Thread.Builder kind, Body body) throws Exception {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        kind.start(() -> {
            try {
                body.run();
            } catch (Throwable e) {
                failure.set(e);
            }
        }).join();
        if (failure.get() != null) throw new AssertionError(failure.get());
    }

    private interface Body {
        void run() throws Exception;
    }

    /** The calling thread's policy and real-time priority as the kernel reports them (proc(5): fields 41 and 40). */
    private record Sched(int policy, int rtPriority) {
        static Sched ofThisThread() throws IOException {
            String[] f = fields();
            return new Sched(Integer.parseInt(f[41 - 3]), Integer.parseInt(f[40 - 3]));
        }

        static Sched uncheckedOfThisThread() {
            try {
                return ofThisThread();
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }

        static int niceOfThisThread() throws IOException {
            return Integer.parseInt(fields()[19 - 3]);
        }

        /** The fields after "(comm)", the first of them field 3. */
        private static String[] fields() throws IOException {
            String stat = Files.readString(Path.of("/proc/thread-self/stat"));
            return stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        }
    }
}
