package io.csi4j.driver.engine;

import io.csi4j.driver.storage.StorageException;
import io.csi4j.driver.os.DirectoryEntries;
import io.csi4j.driver.os.Durable;
import io.csi4j.driver.os.FileStat;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.nio.file.FileAlreadyExistsException;
import java.util.function.UnaryOperator;

/**
 * Where artifacts live inside a pool, and the only way an id from outside becomes a path:
 * {@code <pool>/volumes/<id><suffix>}, {@code <pool>/snapshots/<id><suffix>}, each with a sidecar
 * {@code <id>.meta}; work in progress sits in {@code <pool>/.tmp} until renamed into place; copies of other
 * nodes' snapshots in {@code <pool>/replicas/<source volume id>@<snapshot id><suffix>}; a secondary's round applied
 * in place is journaled, once complete, in {@code <pool>/journals/<volume id>.journal} (never in .tmp: the start-up
 * sweep would delete what a half-applied image needs).
 * An id must be a plain file name of safe characters, and every path is checked without following
 * symlinks, so no id reaches outside the pool.
 */
public final class PoolLayout {
    /** Ids we generate are {@code ObjectId}s; anything else that is a plain, short, safe name is tolerated. */
    public static final Pattern SAFE_ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,127}");
    public static final String SIDECAR = ".meta";
    /** The suffix of a round journal in {@code journals/}. */
    public static final String JOURNAL = ".journal";

    private final Path root;
    private final Path volumes;
    private final Path snapshots;
    private final Path tmp;
    private final Path replicas;
    private final Path journals;
    private final String artifactSuffix;
    private final IdLocks locks = new IdLocks();

    private PoolLayout(Path root, String artifactSuffix) {
        this.root = root;
        this.volumes = root.resolve("volumes");
        this.snapshots = root.resolve("snapshots");
        this.tmp = root.resolve(".tmp");
        this.replicas = root.resolve("replicas");
        this.journals = root.resolve("journals");
        this.artifactSuffix = artifactSuffix;
    }

    /** Creates the directories if missing; refuses a pool whose directories are symlinks. */
    public static PoolLayout open(Path pool, String artifactSuffix) {
        Path root;
        try {
            root = pool.toRealPath();
        } catch (IOException e) {
            throw new UncheckedIOException("pool " + pool, e);
        }
        PoolLayout layout = new PoolLayout(root, artifactSuffix);
        for (Path dir : List.of(layout.volumes, layout.snapshots, layout.tmp)) {
            try {
                Files.createDirectory(dir);
                Durable.fsyncDirectory(root);
            } catch (FileAlreadyExistsException e) {
                if (type(dir) != EntryType.DIRECTORY) {
                    throw new IllegalStateException(dir + " is not a directory (symlink or file); refusing this pool");
                }
            } catch (IOException e) {
                throw new UncheckedIOException("creating " + dir, e);
            }
        }
        return layout;
    }

    public Path root() { return root; }

    /** The pool's per-id locks: its deletes take them, and so does an engine's work that must not meet a delete. */
    public IdLocks locks() { return locks; }

    public Path tmpDir() { return tmp; }

    /** INVALID unless {@code id} is a plain safe file name. */
    public static String checkId(String what, String id) {
        if (!isSafeId(id)) {
            String shown = id == null ? "null" : id.length() > 64 ? id.substring(0, 64) + "..." : id;
            throw StorageException.invalid(what + " id is not a valid id: \"" + shown.replace("\0", "\\0") + "\"");
        }
        return id;
    }

    /** {@link #SAFE_ID} without "..", by hand: every path computation asks, and the regex was a cost of its own. */
    public static boolean isSafeId(String id) {
        if (id == null || id.isEmpty() || id.length() > 128 || id.contains("..")) return false;
        for (int i = 0; i < id.length(); i++) {
            char c = id.charAt(i);
            boolean alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
            if (!alnum && (i == 0 || (c != '.' && c != '_' && c != '-'))) return false;
        }
        return true;
    }

    public Path dir(Artifact.Kind kind) {
        return kind == Artifact.Kind.VOLUME ? volumes : snapshots;
    }

    public Path artifact(Artifact.Kind kind, String id) {
        return contained(dir(kind), checkId(kindName(kind), id) + artifactSuffix);
    }

    public Path sidecar(Artifact.Kind kind, String id) {
        return contained(dir(kind), checkId(kindName(kind), id) + SIDECAR);
    }

    /** A fresh name in .tmp for work on {@code id}. */
    public Path temporary(String id, String suffix) {
        return contained(tmp, id + suffix + "." + UUID.randomUUID().toString().substring(0, 8));
    }

    public static String kindName(Artifact.Kind kind) {
        return kind == Artifact.Kind.VOLUME ? "volume" : "snapshot";
    }

    /** Where the replica of a snapshot of another node's volume lives. */
    public Path replica(String sourceVolumeId, String snapshotId) {
        return contained(replicas, checkId("volume", sourceVolumeId) + "@" + checkId("snapshot", snapshotId) + artifactSuffix);
    }

    /** The replicas present (a name not of that shape is not ours and ignored). */
    public List<Replica> replicas() {
        if (type(replicas) == EntryType.MISSING) return List.of();
        List<Replica> found = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(replicas, "*@*" + artifactSuffix)) {
            for (Path entry : entries) {
                String name = entry.getFileName().toString();
                String[] parts = name.substring(0, name.length() - artifactSuffix.length()).split("@", -1);
                if (parts.length == 2 && isSafeId(parts[0]) && isSafeId(parts[1])) found.add(new Replica(parts[0], parts[1]));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("listing " + replicas, e);
        }
        return found;
    }

    /** Makes a synced temp file the replica, durably (the directory is made on first use). */
    public void commitReplica(Path temp, Replica replica) {
        try {
            Files.createDirectory(replicas);
            Durable.fsyncDirectory(root);
        } catch (FileAlreadyExistsException e) {
            if (type(replicas) != EntryType.DIRECTORY) throw new IllegalStateException(replicas + " is not a directory; refusing it");
        } catch (IOException e) {
            throw new UncheckedIOException("creating " + replicas, e);
        }
        Durable.fsync(temp);
        Durable.rename(temp, replica(replica.sourceVolumeId(), replica.snapshotId()));
        Durable.fsyncDirectory(replicas);
    }

    /** Where a volume's complete round journal lives (docs/inplace-rounds.md, 1.2). */
    public Path journal(String volumeId) {
        return contained(journals, checkId("volume", volumeId) + JOURNAL);
    }

    /** Whether the volume has a complete round journal. */
    public boolean hasJournal(String volumeId) {
        return type(journals) != EntryType.MISSING && type(journal(volumeId)) != EntryType.MISSING;
    }

    /** The volumes with a complete round journal (a name not of that shape is not ours and ignored). */
    public List<String> journals() {
        if (type(journals) == EntryType.MISSING) return List.of();
        List<String> found = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(journals, "*" + JOURNAL)) {
            for (Path entry : entries) {
                String name = entry.getFileName().toString();
                String id = name.substring(0, name.length() - JOURNAL.length());
                if (isSafeId(id) && type(entry) == EntryType.FILE) found.add(id);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("listing " + journals, e);
        }
        return found;
    }

    /**
     * Makes a synced temp file the volume's complete journal, durably: the rename is what makes it complete (the
     * directory is made, its parent synced, on first use).
     */
    public void commitJournal(Path temp, String volumeId) {
        try {
            Files.createDirectory(journals);
            Durable.fsyncDirectory(root);
        } catch (FileAlreadyExistsException e) {
            if (type(journals) != EntryType.DIRECTORY) throw new IllegalStateException(journals + " is not a directory; refusing it");
        } catch (IOException e) {
            throw new UncheckedIOException("creating " + journals, e);
        }
        Durable.fsync(temp);
        Durable.rename(temp, journal(volumeId));
        Durable.fsyncDirectory(journals);
    }

    /** Removes the volume's journal, durably (the directory synced); nothing when absent. */
    public void dropJournal(String volumeId) {
        if (type(journals) == EntryType.MISSING) return;
        Path path = journal(volumeId);
        if (type(path) == EntryType.MISSING) return;
        try {
            Files.deleteIfExists(path);
        } catch (IOException e) {
            throw new UncheckedIOException("deleting " + path, e);
        }
        Durable.fsyncDirectory(journals);
    }

    /** Removes one replica, durably (the directory synced); nothing when absent. */
    public void dropReplica(Replica replica) {
        Path path = replica(replica.sourceVolumeId(), replica.snapshotId());
        if (type(path) == EntryType.MISSING) return;
        deleteQuietly(path);
        Durable.fsyncDirectory(replicas);
    }

    /** Removes the replicas of a source volume but the one of snapshot {@code keep}. */
    public void dropReplicas(String sourceVolumeId, String keep) {
        boolean any = false;
        for (Replica r : replicas()) {
            if (r.sourceVolumeId().equals(sourceVolumeId) && !r.snapshotId().equals(keep)) {
                deleteQuietly(replica(r.sourceVolumeId(), r.snapshotId()));
                any = true;
            }
        }
        if (any) Durable.fsyncDirectory(replicas);
    }

    /** Resolves a name in one of our directories, re-checking that the directory is still ours. */
    private Path contained(Path dir, String name) {
        Path path = dir.resolve(name);
        if (!path.getParent().equals(dir) || type(dir) != EntryType.DIRECTORY) {
            throw StorageException.inUse(path + " is not inside " + dir + " (is " + dir + " still a directory?)");
        }
        return path;
    }

    public enum EntryType { MISSING, FILE, DIRECTORY, OTHER }

    /** What is at {@code path}, not following a symlink there (a symlink is OTHER). */
    public static EntryType type(Path path) {
        return switch (FileStat.typeOf(path)) {  // one statx, no exception for a name that is not there
            case MISSING -> EntryType.MISSING;
            case FILE -> EntryType.FILE;
            case DIRECTORY -> EntryType.DIRECTORY;
            case OTHER -> EntryType.OTHER;
        };
    }

    /**
     * Whether the artifact exists as the expected type; IN_USE when something else
     * (a symlink, a device, a file where a directory belongs) sits under its name.
     */
    public boolean exists(Artifact.Kind kind, String id, EntryType expected) {
        Path path = artifact(kind, id);
        EntryType found = type(path);
        if (found == EntryType.MISSING) return false;
        if (found != expected) {
            throw StorageException.inUse(path + " is not a " + expected.name().toLowerCase()
                    + " (found " + found.name().toLowerCase() + "); refusing to touch it");
        }
        return true;
    }

    /**
     * Which of these ids have an artifact of the expected type: the directory is checked once, then one
     * lstat per id (for a page of ListVolumes, where a path per id would re-check the directory each time).
     */
    public Set<String> present(Artifact.Kind kind, Collection<String> ids, EntryType expected) {
        Path dir = dir(kind);
        if (type(dir) != EntryType.DIRECTORY) {
            throw StorageException.inUse(dir + " is not a directory (symlink or file); refusing this pool");
        }
        Set<String> present = new HashSet<>();
        if (expected == EntryType.FILE) {
            List<String> names = new ArrayList<>(ids.size());
            for (String id : ids) names.add(checkId(kindName(kind), id) + artifactSuffix);
            for (String name : DirectoryEntries.regularFiles(dir, names)) {
                present.add(name.substring(0, name.length() - artifactSuffix.length()));
            }
            return present;
        }
        for (String id : ids) {
            if (type(dir.resolve(checkId(kindName(kind), id) + artifactSuffix)) == expected) present.add(id);
        }
        return present;
    }

    public Optional<Artifact> readSidecar(Artifact.Kind kind, String id) {
        Path path = sidecar(kind, id);
        if (type(path) != EntryType.FILE) return Optional.empty();
        try {
            return Optional.of(Artifact.parse(Files.readString(path)));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException e) {
            throw new UncheckedIOException("reading " + path, e);
        }
    }

    /**
     * Writes the sidecar durably under its final name (temp + fsync + rename + fsync of the directory).
     * The .tmp directory is not synced: whatever a crash leaves there is swept at start-up.
     */
    public void writeSidecar(Artifact artifact) {
        Path target = sidecar(artifact.kind(), artifact.id());
        Path temp = writeSidecarTemp(artifact);
        boolean renamed = false;
        try {
            Durable.fsync(temp);
            Durable.rename(temp, target);
            renamed = true;
            Durable.fsyncDirectory(target.getParent());
        } finally {
            if (!renamed) deleteQuietly(temp);   // after the rename the name is gone: deleting it only threw and caught
        }
    }

    private Path writeSidecarTemp(Artifact artifact) {
        Path temp = temporary(artifact.id(), SIDECAR);
        try {
            Files.writeString(temp, artifact.toJson(), StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
            return temp;
        } catch (IOException e) {
            deleteQuietly(temp);
            throw new UncheckedIOException("writing " + temp, e);
        }
    }

    /**
     * Writes a new artifact's sidecar under its final name without syncing, before the artifact itself is
     * made: for artifacts that their catalog row alone describes (a blank volume), whose row commit is the
     * call's only sync. A crash leaves a sidecar alone (swept at start-up) or both; a power cut may lose
     * both, which the start-up reconciler re-makes from the row ({@link #syncArtifact} makes them durable
     * before anything is written into the artifact).
     */
    public void writeSidecarUnsynced(Artifact artifact) {
        Path target = sidecar(artifact.kind(), artifact.id());
        Path temp = writeSidecarTemp(artifact);
        boolean renamed = false;
        try {
            Durable.rename(temp, target);   // replaces whatever is there (a planted symlink too), never writes through it
            renamed = true;
        } finally {
            // only a failed rename leaves the temporary: deleting a missing one cost two exceptions thrown and caught
            // inside the JDK (lstat, then deleteIfExists), every CreateVolume
            if (!renamed) deleteQuietly(temp);
        }
    }

    /**
     * Makes an artifact made without syncing durable: the artifact (a file's size and blocks, or a
     * directory's entries), its sidecar and their names. Cheap when they are durable already.
     */
    public void syncArtifact(Artifact.Kind kind, String id) {
        Durable.fsync(artifact(kind, id));
        Path sidecar = sidecar(kind, id);
        if (type(sidecar) == EntryType.FILE) Durable.fsync(sidecar);
        Durable.fsyncDirectory(dir(kind));
    }

    /** Makes every create, rename and unlink done so far in this kind's directory durable. */
    public void syncDirectory(Artifact.Kind kind) {
        Durable.fsyncDirectory(dir(kind));
    }

    /**
     * Whether the artifact holds anything written into it: a file with allocated blocks, or a directory
     * with an entry. A blank volume that nobody staged holds nothing, so losing it loses nothing.
     */
    public boolean holdsData(Artifact.Kind kind, String id) {
        Path path = artifact(kind, id);
        return switch (type(path)) {
            case MISSING -> false;
            case FILE -> FileStat.of(path).allocatedBytes() > 0;
            case DIRECTORY -> {
                try (DirectoryStream<Path> entries = Files.newDirectoryStream(path)) {
                    yield entries.iterator().hasNext();
                } catch (IOException e) {
                    throw new UncheckedIOException("listing " + path, e);
                }
            }
            case OTHER -> true;  // not ours to judge: never swept as empty
        };
    }

    /** A finished artifact in .tmp and what its sidecar will say about it. */
    public record Finished(Artifact artifact, Path temp) {}

    /**
     * Makes finished artifacts visible under their final names with their sidecars, durably, syncing each
     * directory once for all of them: every temp file is synced, then each sidecar is renamed before its
     * artifact (an artifact never shows without its description; a sidecar left alone by a crash is
     * swept at start-up), then the directories are synced. Renames out of .tmp need no sync of .tmp.
     */
    public void reveal(List<Finished> finished) {
        List<Path> sidecarTemps = new ArrayList<>();
        try {
            for (Finished f : finished) sidecarTemps.add(writeSidecarTemp(f.artifact()));
            for (int i = 0; i < finished.size(); i++) {
                Durable.fsync(finished.get(i).temp());
                Durable.fsync(sidecarTemps.get(i));
            }
            Set<Path> dirs = new TreeSet<>();
            for (int i = 0; i < finished.size(); i++) {
                Artifact a = finished.get(i).artifact();
                Durable.rename(sidecarTemps.get(i), sidecar(a.kind(), a.id()));
                Durable.rename(finished.get(i).temp(), artifact(a.kind(), a.id()));
                dirs.add(dir(a.kind()));
            }
            dirs.forEach(Durable::fsyncDirectory);
        } finally {
            sidecarTemps.forEach(PoolLayout::deleteQuietly);
        }
    }

    /** Makes a finished temp artifact visible under its final name, durably (its sidecar is there already). */
    public void commit(Path temp, Artifact.Kind kind, String id) {
        Durable.fsync(temp);
        Path target = artifact(kind, id);
        Durable.rename(temp, target);
        Durable.fsyncDirectory(target.getParent());
    }

    /** Ids with an artifact on disk (names that are not valid ids are ignored: they are not ours). */
    public Set<String> ids(Artifact.Kind kind) {
        Set<String> ids = new TreeSet<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir(kind), "*" + artifactSuffix)) {
            for (Path entry : entries) {
                String name = entry.getFileName().toString();
                String id = name.substring(0, name.length() - artifactSuffix.length());
                if (isSafeId(id)) ids.add(id);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("listing " + dir(kind), e);
        }
        return ids;
    }

    /**
     * Removes whatever interrupted work left: everything in .tmp, and sidecars whose artifact never
     * got its final name. Only safe while no engine call is running (at start-up).
     */
    public List<Path> sweep() {
        List<Path> removed = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(tmp)) {
            for (Path entry : entries) {
                deleteTree(entry);
                removed.add(entry);
            }
            for (Artifact.Kind kind : Artifact.Kind.values()) {
                try (DirectoryStream<Path> sidecars = Files.newDirectoryStream(dir(kind), "*" + SIDECAR)) {
                    for (Path sidecar : sidecars) {
                        String name = sidecar.getFileName().toString();
                        Path artifact = dir(kind).resolve(name.substring(0, name.length() - SIDECAR.length()) + artifactSuffix);
                        if (type(artifact) == EntryType.MISSING && type(sidecar) == EntryType.FILE) {
                            Files.delete(sidecar);
                            removed.add(sidecar);
                        }
                    }
                }
                Durable.fsyncDirectory(dir(kind));
            }
            Durable.fsyncDirectory(tmp);
        } catch (IOException e) {
            throw new UncheckedIOException("sweeping " + tmp, e);
        }
        return removed;
    }

    /** Deletes a file or a tree without following symlinks (a symlink is removed, not its target). */
    public static void deleteTree(Path path) throws IOException {
        if (type(path) == EntryType.DIRECTORY) {
            try (Stream<Path> walk = Files.walk(path)) {
                for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
            }
        } else {
            Files.deleteIfExists(path);
        }
    }

    public static void deleteQuietly(Path path) {
        try {
            deleteTree(path);
        } catch (IOException | UncheckedIOException ignored) {
            // best effort: the start-up sweep removes what is left in .tmp
        }
    }

    /** Rewrites the sidecar if the artifact (of {@code type}) and its sidecar still exist; false if not. */
    public boolean rewriteSidecar(Artifact.Kind kind, String id, EntryType type, UnaryOperator<Artifact> change) {
        return locks.locked(id, () -> {
            if (!exists(kind, id, type)) return false;
            Optional<Artifact> current = readSidecar(kind, id);
            if (current.isEmpty()) return false;
            Artifact next = change.apply(current.get());
            if (!next.equals(current.get())) writeSidecar(next);
            return true;
        });
    }

    /**
     * Deletes artifact then sidecar (an artifact never outlives its description), durably with one sync
     * of the directory. A file goes with one unlink; a directory tree is renamed into .tmp first, so a
     * crash in the middle of deleting it leaves nothing half-visible (the start-up sweep finishes it).
     */
    public void delete(Artifact.Kind kind, String id) {
        locks.locked(id, () -> deleteUnlocked(kind, id, true));
    }

    /**
     * As {@link #delete} without the sync of the directory: for a caller whose catalog commit (a tombstone)
     * already makes the delete durable, and that syncs the directory later, once for many ({@link #syncDirectory}).
     */
    public void deleteUnsynced(Artifact.Kind kind, String id) {
        locks.locked(id, () -> deleteUnlocked(kind, id, false));
    }

    private void deleteUnlocked(Artifact.Kind kind, String id, boolean sync) {
        Path artifact = artifact(kind, id);
        Path sidecar = sidecar(kind, id);
        try {
            Path doomed = null;
            switch (type(artifact)) {
                case MISSING -> { }
                case DIRECTORY -> {
                    doomed = temporary(id, ".deleting");
                    Durable.rename(artifact, doomed);
                }
                default -> Files.delete(artifact);
            }
            if (type(sidecar) == EntryType.FILE) Files.delete(sidecar);
            if (sync) Durable.fsyncDirectory(dir(kind));
            if (doomed != null) deleteTree(doomed);
        } catch (IOException e) {
            throw new UncheckedIOException("deleting " + artifact, e);
        }
    }
}
