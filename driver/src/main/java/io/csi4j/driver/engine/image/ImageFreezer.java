package io.csi4j.driver.engine.image;

import static io.csi4j.driver.engine.EngineErrors.translate;

import io.csi4j.driver.engine.Artifact;
import io.csi4j.driver.engine.FreezeHold;
import io.csi4j.driver.engine.Freezer;
import io.csi4j.driver.engine.PoolLayout;
import io.csi4j.driver.os.Durable;
import io.csi4j.driver.os.Errno;
import io.csi4j.driver.os.Freeze;
import io.csi4j.driver.os.LoopDevice;
import io.csi4j.driver.os.MountInfo;
import io.csi4j.driver.os.MountTable;
import io.csi4j.driver.os.OsException;
import io.csi4j.driver.os.UrgentThread;
import io.csi4j.driver.storage.StorageException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.logging.Logger;
import java.util.stream.IntStream;

/**
 * Freezing the filesystems of attached images: around a cut (snapshot, clone, a volume sent to another node), held
 * between calls for a group snapshot that spans nodes ({@link Freezer}), and thawed at start-up when a crash left
 * one frozen.
 */
final class ImageFreezer implements Freezer {
    private static final Logger LOG = Logger.getLogger(ImageFreezer.class.getName());
    /**
     * How long an unstage or unpublish waits for a cut of its volume: a reflink cut takes well under a second, a
     * copy-fallback pool's copies the whole image; past this the answer is BUSY (ABORTED), within a CO's usual deadline.
     */
    static final long CUT_WAIT_S = 30;

    /**
     * How long a freeze hold waits for a cut or an unmount of one of its volumes before it answers BUSY: the other
     * nodes of a group snapshot are frozen already and their holds lapse ({@code CrossNodeGroupSnapshots.HOLD}, 10 s).
     */
    static final long HOLD_WAIT_S = 5;

    private final ImagePool images;
    /** Whether a cut's freeze window runs its thread real-time ({@link UrgentThread}); false only in the bench's "before". */
    private final boolean urgent;
    /**
     * One per stripe of volume ids, like {@link io.csi4j.driver.engine.IdLocks} (memory does not grow with the ids).
     * {@code cutting} is held by a cut from its look at the mount table to its thaw, and by an unstage or unpublish
     * while it unmounts; {@code holds} counts the freeze holds ({@link #holdFrozen}, held between calls, so by no
     * thread) of volumes of the stripe. A cut or a hold holds its mount points open (FIFREEZE needs an fd), so an
     * unmount meanwhile fails with EBUSY; an unmount between their look and their open would have them freeze the
     * filesystem holding the staging path instead. So an unmount waits for both, bounded ({@link #outsideCuts}).
     */
    private static final class Stripe {
        final ReentrantLock cutting = new ReentrantLock();
        final Condition released = cutting.newCondition();
        int holds;                                     // guarded by cutting
    }

    private final Stripe[] stripes = IntStream.range(0, 64).mapToObj(i -> new Stripe()).toArray(Stripe[]::new);

    ImageFreezer(ImagePool images) {
        this(images, true);
    }

    ImageFreezer(ImagePool images, boolean urgent) {
        this.images = images;
        this.urgent = urgent;
    }

    /**
     * Runs {@code work} with every mounted filesystem of these volumes frozen (thawed afterwards,
     * also when it fails). Attached but unmounted devices (block volumes) cannot be frozen; their
     * page cache is flushed into the image first, so what was written before the cut is in it.
     * A cut takes its stripes in order.
     */
    void cut(List<String> volumeIds, Runnable work) {
        cut(volumeIds, frozen -> {
            work.run();
            return "whole clone";
        });
    }

    /**
     * As {@link #cut(List, Runnable)}; {@code work} is told which of the volumes are frozen whole (every loop device
     * of the image a mounted filesystem, frozen now: nothing writes their images until it returns; a block volume's
     * writer is never stopped) and answers how it cut, for the cut's log line.
     */
    void cut(List<String> volumeIds, Function<Set<String>, String> work) {
        List<ReentrantLock> held = new ArrayList<>();
        try {
            for (Stripe stripe : stripesOf(volumeIds)) {
                stripe.cutting.lock();
                held.add(stripe.cutting);
            }
            long start = System.nanoTime();
            Set<String> whole = new HashSet<>();
            // the workload's writes wait from FIFREEZE to FITHAW, and on a busy node the thread working inside waited for
            // CPU behind unrelated work: real-time from before the freeze (its flush is in the window) to after the thaw,
            // on a platform thread of its own when the caller is virtual (UrgentThread.call; the stripes stay the caller's)
            // only where the work inside is clones (reflink pools): a pool that copies whole images in the window would
            // hold a core at real-time for the copy's seconds
            Window window = UrgentThread.call(urgent && images.pool().reflink(), priority -> {
                Freeze.Frozen frozen = freezeMounted(volumeIds, whole);
                if (frozen == null) return null;
                long froze = System.nanoTime();
                long worked;
                String how;
                try (frozen) {
                    how = work.apply(Set.copyOf(whole));
                    worked = System.nanoTime();
                }
                return new Window(froze, worked, System.nanoTime(), how, priority.describe());
            });
            if (window == null) {
                // nothing held (no filesystem mounted): nobody waits for this clone, so as the caller runs; not a window,
                // but which way the cut went
                String how = work.apply(Set.of());
                long done = System.nanoTime();
                if (!volumeIds.isEmpty()) LOG.info(() -> String.format("cut of %s: nothing frozen, flush and clone %.1f ms; %s", volumeIds, ms(done - start), how));
                return;
            }
            // the workload's writes wait from FIFREEZE's start to FITHAW's end; "freeze and flush" also counts the look at
            // the mount table before it (a bound, not less); "clone" is the work inside, whole or incremental (said
            // after). One line per cut, like a round's: the bench (scripts/bench-replication, phase decompose) reads it
            // to split that window (docs/data-path.md, section 7)
            LOG.info(() -> String.format("cut of %s: writes held %.1f ms (freeze and flush %.1f ms, clone %.1f ms, thaw %.1f ms); %s; at %s",
                    volumeIds, ms(window.thawed() - start), ms(window.froze() - start), ms(window.worked() - window.froze()),
                    ms(window.thawed() - window.worked()), window.how(), window.priority()));
        } finally {
            held.reversed().forEach(ReentrantLock::unlock);
        }
    }

    /** A cut's frozen window: when it froze, finished its work and thawed (System.nanoTime), how it cut, at what priority. */
    private record Window(long froze, long worked, long thawed, String how, String priority) {}

    /**
     * Runs {@code work} (an unmount of the volume's) while no {@link #cut} of it runs and no {@link #holdFrozen} holds
     * it: it waits for them, for {@link #CUT_WAIT_S} at most in all (then BUSY, retry). Take no other stripe inside.
     */
    <T> T outsideCuts(String volumeId, Supplier<T> work) {
        Stripe stripe = stripes[stripe(volumeId)];
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(CUT_WAIT_S);
        try {
            if (!stripe.cutting.tryLock(CUT_WAIT_S, TimeUnit.SECONDS)) {
                throw new StorageException(StorageException.Reason.BUSY, "volume " + volumeId + " is being cut (a snapshot or a"
                        + " replication point) for over " + CUT_WAIT_S + " s; retry");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StorageException(StorageException.Reason.BUSY, "interrupted waiting for a cut of volume " + volumeId);
        }
        try {
            while (stripe.holds > 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new StorageException(StorageException.Reason.BUSY, "volume " + volumeId + " is held frozen for a group"
                            + " snapshot for over " + CUT_WAIT_S + " s; retry");
                }
                stripe.released.awaitNanos(left);
            }
            return work.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StorageException(StorageException.Reason.BUSY, "interrupted waiting for a freeze hold of volume " + volumeId);
        } finally {
            stripe.cutting.unlock();
        }
    }

    private static double ms(long nanos) {
        return nanos / 1e6;
    }

    private int stripe(String volumeId) {
        return Math.floorMod(volumeId.hashCode(), stripes.length);
    }

    /** The stripes of these volumes, each once, in order (the order every taker of several follows). */
    private List<Stripe> stripesOf(List<String> volumeIds) {
        var numbers = new TreeSet<Integer>();
        volumeIds.forEach(id -> numbers.add(stripe(id)));
        return numbers.stream().map(i -> stripes[i]).toList();
    }

    /**
     * Freezes the mounted filesystems of these volumes (null when none is mounted); flushes attached block devices. Adds
     * to {@code whole} the volumes attached only as mounted filesystems (all frozen once this returns).
     */
    private Freeze.Frozen freezeMounted(List<String> volumeIds, Set<String> whole) {
        MountTable table = MountTable.read();
        Map<String, Path> mountPoints = new LinkedHashMap<>();
        for (String volumeId : volumeIds) {
            List<LoopDevice> devices = LoopDevice.findByCanonicalBackingFile(images.image(volumeId));
            boolean allMounted = !devices.isEmpty();
            for (LoopDevice device : devices) {
                List<MountInfo> mounts = table.mountsOf(device.node());
                if (mounts.isEmpty()) {
                    allMounted = false;
                    Durable.fsync(device.node());
                } else {
                    MountInfo m = mounts.getFirst();
                    mountPoints.putIfAbsent(m.major() + ":" + m.minor(), m.mountPoint());
                }
            }
            if (allMounted) whole.add(volumeId);
        }
        if (mountPoints.isEmpty()) return null;
        try {
            return Freeze.freezeAll(mountPoints.values());
        } catch (OsException e) {
            // frozen already: another snapshot of one of these volumes is being cut right now
            if (e.is(Errno.EBUSY)) throw new StorageException(StorageException.Reason.BUSY, "freezing " + mountPoints.values() + ": busy; retry", e);
            throw e;
        }
    }

    /**
     * As a {@link #cut} that lasts until the hold is closed: its stripes are taken (waiting {@link #HOLD_WAIT_S} at most
     * for a cut or an unmount of a member, then BUSY), counted as held and let go again, so an unstage or unpublish of
     * a member waits for the thaw ({@link #outsideCuts}) instead of meeting a frozen, open filesystem (EBUSY).
     */
    @Override
    public FreezeHold holdFrozen(List<String> volumeIds) {
        List<String> ids = volumeIds.stream().map(id -> PoolLayout.checkId("volume", id)).toList();
        return translate("freezing " + ids, () -> {
            for (String volumeId : ids) {
                images.store().require(Artifact.Kind.VOLUME, volumeId);
            }
            List<Stripe> taken = stripesOf(ids);
            List<ReentrantLock> locked = new ArrayList<>();
            try {
                for (Stripe stripe : taken) {
                    if (!stripe.cutting.tryLock(HOLD_WAIT_S, TimeUnit.SECONDS)) {
                        throw new StorageException(StorageException.Reason.BUSY, "volumes " + ids + " are being cut or unmounted"
                                + " for over " + HOLD_WAIT_S + " s; retry");
                    }
                    locked.add(stripe.cutting);
                }
                Freeze.Frozen frozen = freezeMounted(ids, new HashSet<>());
                taken.forEach(stripe -> stripe.holds++);
                return new FreezeHold(ids, frozen, () -> release(taken));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new StorageException(StorageException.Reason.BUSY, "interrupted waiting to freeze " + ids);
            } finally {
                locked.reversed().forEach(ReentrantLock::unlock);
            }
        });
    }

    /** A hold's stripes let go (after its thaw): the unmounts waiting for them go on. */
    private static void release(List<Stripe> held) {
        for (Stripe stripe : held) {
            stripe.cutting.lock();
            try {
                stripe.holds--;
                stripe.released.signalAll();
            } finally {
                stripe.cutting.unlock();
            }
        }
    }

    /**
     * A process killed while it held a snapshot's freeze leaves the filesystem frozen: the kernel
     * keeps the freeze, every write of the workload hangs and every later freeze is EBUSY. At
     * start-up no cut is in flight, so each of our mounted volumes is thawed (a no-op if not frozen).
     */
    List<Path> thawLeftFrozen() {
        List<Path> thawed = new ArrayList<>();
        MountTable table = MountTable.read();
        for (String volumeId : images.layout().ids(Artifact.Kind.VOLUME)) {
            for (LoopDevice device : LoopDevice.findByCanonicalBackingFile(images.image(volumeId))) {
                for (MountInfo m : table.mountsOf(device.node())) {
                    if (Freeze.thaw(m.mountPoint())) thawed.add(m.mountPoint());
                }
            }
        }
        return thawed;
    }
}
