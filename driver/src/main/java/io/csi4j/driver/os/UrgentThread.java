package io.csi4j.driver.os;

/**
 * The calling platform thread run ahead of the node's other runnable threads for a short stretch that others wait on:
 * SCHED_FIFO at the lowest real-time priority (1) until {@link #close}, then the policy and priority it had. Made for
 * a cut's freeze window, which holds the workload's writes: on a busy node the thread walking extents inside the freeze
 * waited for CPU behind unrelated work (bench/results/replication/2026-11-28-cutwalk-*: a 64k-extent FIEMAP walk
 * took 130 ms alone, 250-930 ms beside six busy processes, 130 ms with SCHED_FIFO). A nice value would not do: with
 * autogroups (or a cgroup per pod) it only ranks the threads of one session (or cgroup) against each other.
 * <p>Bounds: the kernel's real-time throttling (sched_rt_runtime_us, 95% of each second by default) leaves the rest to
 * others, and {@code SCHED_RESET_ON_FORK} keeps a process started meanwhile out of it. The thread must not spin on
 * something a lower thread holds (a freeze window's work is system calls and a little Java; a blocked call sleeps).
 * Without CAP_SYS_NICE, or in a cgroup with no real-time budget, the kernel says EPERM: the thread then runs as it was,
 * and {@link #raised} says why not. A virtual thread is never raised: its carrier would be, and would run other
 * virtual threads so; {@link #call} runs the stretch on a platform thread of its own instead (the agents serve calls
 * on virtual threads). A thread real-time already is left as it is.
 */
public final class UrgentThread implements AutoCloseable {
    private static final int SCHED_OTHER = 0;
    private static final int SCHED_FIFO = 1;
    private static final int SCHED_RESET_ON_FORK = 0x40000000;
    private static final int PRIORITY = 1;

    private final Thread owner;
    private final int policy;        // the thread's before, restored by close; -1: not raised
    private final int priority;
    private final String whyNot;     // null when raised
    private boolean closed;

    private UrgentThread(Thread owner, int policy, int priority, String whyNot) {
        this.owner = owner;
        this.policy = policy;
        this.priority = priority;
        this.whyNot = whyNot;
    }

    /** Raises the calling thread (when it can: see {@link #raised}). */
    public static UrgentThread enter() {
        Thread thread = Thread.currentThread();
        if (thread.isVirtual()) return notRaised(thread, "a virtual thread");
        try {
            int before = Libc.schedGetscheduler();
            if ((before & ~SCHED_RESET_ON_FORK) != SCHED_OTHER) return notRaised(thread, "policy " + before + " already");
            int priority = Libc.schedGetparam();
            Libc.schedSetscheduler(SCHED_FIFO | SCHED_RESET_ON_FORK, PRIORITY);
            return new UrgentThread(thread, before, priority, null);
        } catch (OsException e) {
            return notRaised(thread, e.errnoName());
        }
    }

    /**
     * Runs {@code work} raised ({@link #enter}) when {@code raise}, else as the caller runs: on the calling thread, or,
     * when that is a virtual thread, on a platform thread started for it while the caller waits (for its end, even when
     * interrupted: the work may hold a frozen filesystem). The work is given how it runs, and must not need the
     * caller's locks or thread-locals.
     */
    public static <T> T call(boolean raise, java.util.function.Function<UrgentThread, T> work) {
        if (!raise) {
            try (UrgentThread as = notRaised("not asked")) {
                return work.apply(as);
            }
        }
        if (!Thread.currentThread().isVirtual()) {
            try (UrgentThread raised = enter()) {
                return work.apply(raised);
            }
        }
        Object[] result = new Object[1];
        Throwable[] failure = new Throwable[1];
        Thread platform = Thread.ofPlatform().name("csi4j-urgent").start(() -> {
            try (UrgentThread raised = enter()) {
                result[0] = work.apply(raised);
            } catch (Throwable e) {
                failure[0] = e;
            }
        });
        boolean interrupted = false;
        while (true) {
            try {
                platform.join();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) Thread.currentThread().interrupt();
        // join() orders the platform thread's writes before these reads
        if (failure[0] instanceof RuntimeException e) throw e;
        if (failure[0] instanceof Error e) throw e;
        if (failure[0] != null) throw new IllegalStateException(failure[0]);
        @SuppressWarnings("unchecked") T t = (T) result[0];
        return t;
    }

    /** Leaves the calling thread as it is (the bench's "before"). */
    public static UrgentThread notRaised(String why) {
        return notRaised(Thread.currentThread(), why);
    }

    private static UrgentThread notRaised(Thread thread, String why) {
        return new UrgentThread(thread, -1, 0, why);
    }

    /** Whether the thread runs real-time until closed. */
    public boolean raised() { return whyNot == null; }

    /** "real-time", or why not (for a log line). */
    public String describe() {
        return raised() ? "real-time" : "normal priority (" + whyNot + ")";
    }

    /** Back to the policy the thread had; on the thread that entered. */
    @Override
    public void close() {
        if (closed) return;
        closed = true;
        if (!raised()) return;
        if (Thread.currentThread() != owner) {
            throw new IllegalStateException("an urgent stretch of " + owner + " closed by " + Thread.currentThread());
        }
        // leaving real-time needs no privilege: a failure here is a kernel's surprise, and the thread must not stay raised
        Libc.schedSetscheduler(policy, priority);
    }
}
