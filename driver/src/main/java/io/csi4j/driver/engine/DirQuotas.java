package io.csi4j.driver.engine;

import io.csi4j.driver.os.OsException;
import io.csi4j.driver.os.ProjectQuota;
import io.csi4j.driver.storage.StorageException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Map;
import java.util.NavigableSet;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.ToLongFunction;
import java.util.stream.Stream;

/**
 * Hard capacity for directory volumes through project quotas, when the pool's filesystem enforces them
 * ({@link ProjectQuota#enforced}). Each volume directory carries its own project id (with PROJINHERIT, so all made
 * in it counts) and the project's hard block limit is the volume's capacity.
 *
 * <p>Where the id is kept: on the directory's inode itself (fsx_projid), durable with the directory; nothing else
 * records it. At open every volume directory's id is read back into {@link #ids}; an id is never handed to a second
 * volume while the first one's directory exists ({@link ProjectIds}).
 *
 * <p>Order, for the crash protocol (docs/design.md): the limit is set for a fresh id before the directory is tagged
 * with it, so a directory that has an id has its limit (XFS logs both in order, and the fsync of the directory at
 * publish forces the log past both). A crash before the tag leaves a blank directory without an id, and its create
 * was not acknowledged (the row commits after the engine returns); {@link #reconcile} at open tags any volume
 * directory without an id and sets every volume's limit to its recorded size again, which also finishes an expand
 * or a delete cut short.
 */
final class DirQuotas {
    private static final System.Logger LOG = System.getLogger(DirQuotas.class.getName());

    private final Path pool;
    private final Map<String, Integer> ids = new ConcurrentHashMap<>();
    private final NavigableSet<Integer> used = new TreeSet<>();

    private DirQuotas(Path pool) {
        this.pool = pool;
    }

    /** Quotas for the pool at {@code pool}, or empty when its filesystem does not enforce project quotas. */
    static Optional<DirQuotas> of(Path pool) {
        try {
            return ProjectQuota.enforced(pool) ? Optional.of(new DirQuotas(pool)) : Optional.empty();
        } catch (OsException e) { // an answer we do not know: serve as without quotas, and say why
            LOG.log(System.Logger.Level.WARNING, "cannot tell whether " + pool + " enforces project quotas: " + e.getMessage());
            return Optional.empty();
        }
    }

    /**
     * Reads the ids of the existing volume directories, gives one to any that has none (its whole tree tagged), and
     * sets every limit to the recorded size.
     */
    void reconcile(Map<String, Path> volumes, ToLongFunction<String> recordedSize) {
        Map<String, Path> untagged = new java.util.TreeMap<>();
        volumes.forEach((volumeId, dir) -> {
            int id = ProjectQuota.projectOf(dir);
            if (ProjectIds.ours(id)) remember(volumeId, id);
            else untagged.put(volumeId, dir);
        });
        untagged.forEach((volumeId, dir) -> {
            LOG.log(System.Logger.Level.INFO, "volume " + volumeId + " has no project id yet: giving it one, with its limit");
            attachTree(volumeId, dir, recordedSize.applyAsLong(volumeId));
        });
        ids.forEach((volumeId, id) -> {
            if (!untagged.containsKey(volumeId)) ProjectQuota.limit(pool, id, recordedSize.applyAsLong(volumeId));
        });
    }

    private synchronized void remember(String volumeId, int id) {
        ids.put(volumeId, id);
        used.add(id);
    }

    private synchronized int allocate(String volumeId) {
        int id = ProjectIds.next(used).orElseThrow(() -> StorageException.noSpace("no free project id in the pool"));
        used.add(id);
        ids.put(volumeId, id);
        return id;
    }

    private synchronized void release(String volumeId) {
        Integer id = ids.remove(volumeId);
        if (id != null) used.remove(id);
    }

    /** A fresh id for a new, empty volume directory: its limit, then the tag. Undone (id released) on failure. */
    void attach(String volumeId, Path dir, long capacityBytes) {
        int id = allocate(volumeId);
        try {
            ProjectQuota.limit(pool, id, capacityBytes);
            ProjectQuota.assign(dir, id);
        } catch (RuntimeException e) {
            release(volumeId);
            throw e;
        }
    }

    /**
     * A fresh id for a directory that already holds a tree (a clone or restore, copied first; a volume made before
     * the pool had quotas): the limit, then every directory and regular file in it tagged, the top last.
     */
    void attachTree(String volumeId, Path dir, long capacityBytes) {
        int id = allocate(volumeId);
        try {
            ProjectQuota.limit(pool, id, capacityBytes);
            try (Stream<Path> walk = Files.walk(dir)) {
                for (Path p : walk.toList()) {
                    if (p.equals(dir)) continue;
                    // FS_IOC_FSSETXATTR needs an open file: symlinks and special files are left (they hold no blocks)
                    if (Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS) || Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)) {
                        ProjectQuota.assign(p, id);
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException("tagging " + dir + " with project " + id, e);
            }
            ProjectQuota.assign(dir, id);
        } catch (RuntimeException e) {
            release(volumeId);
            throw e;
        }
    }

    /** A new capacity: the limit follows the recorded size (at open too, should a crash come between). */
    void resize(String volumeId, long capacityBytes) {
        Integer id = ids.get(volumeId);
        if (id != null) ProjectQuota.limit(pool, id, capacityBytes);
    }

    /** After the volume's directory is gone: its limit removed and its id free again. */
    void detach(String volumeId) {
        Integer id = ids.get(volumeId);
        if (id == null) return;
        try {
            ProjectQuota.limit(pool, id, 0);
        } catch (OsException e) {
            LOG.log(System.Logger.Level.WARNING, "removing the limit of project " + id + " (volume " + volumeId + "): " + e.getMessage());
        }
        release(volumeId);
    }

    /** The volume's project id, if it has one. */
    OptionalInt id(String volumeId) {
        Integer id = ids.get(volumeId);
        return id == null ? OptionalInt.empty() : OptionalInt.of(id);
    }

    /** The project's usage and limit, for the volume's stats; empty for a volume without an id. */
    Optional<ProjectQuota.Usage> usage(String volumeId) {
        Integer id = ids.get(volumeId);
        return id == null ? Optional.empty() : Optional.of(ProjectQuota.usage(pool, id));
    }

}
