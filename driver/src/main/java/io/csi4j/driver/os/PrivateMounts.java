package io.csi4j.driver.os;

import java.util.concurrent.atomic.AtomicReference;
import java.nio.file.Path;

/**
 * Runs work in a mount namespace of its own: a new platform thread unshares its mount namespace
 * (CLONE_NEWNS), makes every mount in it private (so nothing it mounts propagates back), runs the work and
 * ends. Whatever it mounted is seen by no other thread or process, and goes away with the thread even if the
 * work could not unmount it (the namespace dies with its last task; a process killed meanwhile takes it along).
 */
public final class PrivateMounts {
    private PrivateMounts() {}

    private static final int CLONE_NEWNS = 0x00020000;

    /** Runs {@code work} on a thread in a private mount namespace and waits for it; rethrows what it threw. */
    public static void run(String name, Runnable work) {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread thread = Thread.ofPlatform().name(name).unstarted(() -> {
            try {
                Libc.unshare(CLONE_NEWNS, "unshare(CLONE_NEWNS)");
                Mounts.setPropagation(Path.of("/"), Propagation.PRIVATE, true);
                work.run();
            } catch (Throwable t) {
                failure.set(t);
            }
        });
        thread.start();
        boolean interrupted = false;
        while (true) {
            try {
                thread.join();
                break;
            } catch (InterruptedException e) {
                interrupted = true;   // the work holds a mount: it finishes before we leave
            }
        }
        if (interrupted) Thread.currentThread().interrupt();
        Throwable t = failure.get();
        if (t instanceof RuntimeException r) throw r;
        if (t instanceof Error e) throw e;
        if (t != null) throw new IllegalStateException(t);
    }
}
