package io.csi4j.driver.reconcile;

import io.csi4j.driver.catalog.Catalog;
import io.csi4j.driver.catalog.CatalogException;
import io.csi4j.driver.engine.AccessType;
import io.csi4j.driver.engine.Artifact;
import io.csi4j.driver.engine.PoolStorage;
import io.csi4j.driver.model.ContentSource;
import io.csi4j.driver.model.GroupSnapshotRecord;
import io.csi4j.driver.model.SnapshotRecord;
import io.csi4j.driver.model.State;
import io.csi4j.driver.model.VolumeKind;
import io.csi4j.driver.model.VolumeRecord;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.time.InstantSource;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import io.csi4j.driver.os.Durable;

/**
 * What {@code csi4j fsck} does: compares the catalog with the pool, and rebuilds a missing or damaged
 * catalog from the artifacts' sidecars ({@link Artifact}: id, kind, size, access, content source, the
 * CO's name, the group snapshot). The old file is moved aside, never deleted.
 *
 * <p>What a sidecar does not carry is not rebuilt: CSI-Addons volume groups and their memberships,
 * ControllerPublish records, StorageClass and mutable parameters. Artifacts never labelled with a name
 * (their create was cut short and never acknowledged) stay orphans, as the reconciler reports them.
 *
 * <p>A blank volume is made without a sync (its row is the commit, and the image is derivable from it), so
 * a power cut before its first stage may leave it without image and sidecar. The check reports such rows as
 * re-made at the next start, not as missing; a rebuild, which has only the pool, cannot know of them, and
 * they held nothing (stage and publish make the image and its sidecar durable before any write). Files of
 * deleted volumes that a tombstone names, and artifacts no row owns that hold nothing, are reported as swept
 * at the next start: both are what the crash protocol leaves, not damage.
 */
public final class CatalogRebuild {
    private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss").withZone(ZoneOffset.UTC);

    public enum CatalogState { SOUND, MISSING, DAMAGED }

    /**
     * What fsck found. {@code rowsWithoutArtifact} and {@code artifactsWithoutRow} are only known when
     * the catalog is sound; {@code unlabelled} are artifacts whose sidecar names no object (never
     * acknowledged), {@code unreadable} those whose sidecar is missing or bad.
     */
    public record Report(CatalogState state, String problem, int volumes, int snapshots, int groupSnapshots,
                         Set<String> rowsWithoutArtifact, Set<String> artifactsWithoutRow, Set<String> unlabelled,
                         List<String> unreadable, Optional<Path> movedAside, boolean rebuilt,
                         Set<String> remadeAtStart, Set<String> sweptAtStart) {

        public boolean consistent() {
            return state == CatalogState.SOUND && rowsWithoutArtifact.isEmpty() && artifactsWithoutRow.isEmpty()
                    && unreadable.isEmpty();
        }

        public List<String> lines() {
            List<String> lines = new ArrayList<>();
            lines.add("catalog: " + state.name().toLowerCase() + (problem.isEmpty() ? "" : " (" + problem + ")"));
            movedAside.ifPresent(p -> lines.add("moved the old catalog aside to " + p));
            lines.add((rebuilt ? "rebuilt from the pool: " : "pool: ") + volumes + " volumes, " + snapshots
                    + " snapshots, " + groupSnapshots + " group snapshots");
            if (!rowsWithoutArtifact.isEmpty()) lines.add("rows whose artifact is missing: " + rowsWithoutArtifact);
            if (!artifactsWithoutRow.isEmpty()) lines.add("artifacts no row owns: " + artifactsWithoutRow);
            if (!unlabelled.isEmpty()) lines.add("artifacts never acknowledged (left as orphans): " + unlabelled);
            if (!remadeAtStart.isEmpty()) lines.add("blank volumes whose image the next start re-makes from the row: " + remadeAtStart);
            if (!sweptAtStart.isEmpty()) lines.add("artifacts of deleted or never committed volumes the next start removes: " + sweptAtStart);
            unreadable.forEach(u -> lines.add("unreadable: " + u));
            return lines;
        }
    }

    private CatalogRebuild() {}

    /** Reads the catalog (if it opens) and the pool; changes nothing. */
    public static Report check(Path dataDir, PoolStorage engine) {
        Scan scan = scan(engine, "");
        Path file = dataDir.resolve(Catalog.FILE_NAME);
        if (isMissing(file)) return scan.report(CatalogState.MISSING, "", Set.of(), Set.of(), Optional.empty(), false);
        try (Catalog catalog = Catalog.open(file)) {
            List<String> problems = catalog.integrityCheck();
            if (!problems.isEmpty()) {
                return scan.report(CatalogState.DAMAGED, String.join("; ", problems), Set.of(), Set.of(), Optional.empty(), false);
            }
            Set<String> missing = new TreeSet<>();
            Set<String> remade = new TreeSet<>();
            Set<String> volumeArtifacts = engine.volumeArtifacts();
            Set<String> snapshotArtifacts = engine.snapshotArtifacts();
            for (VolumeRecord v : catalog.volumes().inState(State.READY)) {
                if (volumeArtifacts.contains(v.id())) continue;
                (v.source() instanceof ContentSource.None ? remade : missing).add(v.id());
            }
            for (SnapshotRecord s : catalog.snapshots().inState(State.READY)) {
                if (!snapshotArtifacts.contains(s.id())) missing.add(s.id());
            }
            Set<String> unowned = new TreeSet<>();
            Set<String> swept = new TreeSet<>();
            Set<String> tombstones = Set.copyOf(catalog.tombstones().volumeIds());
            for (String id : volumeArtifacts) {
                if (catalog.volumes().byId(id).isPresent()) continue;
                boolean protocol = tombstones.contains(id) || !engine.holdsData(Artifact.Kind.VOLUME, id);
                (protocol ? swept : unowned).add(id);
            }
            snapshotArtifacts.stream().filter(id -> catalog.snapshots().byId(id).isEmpty()).forEach(unowned::add);
            return scan.report(CatalogState.SOUND, "", missing, unowned, Optional.empty(), false, remade, swept);
        } catch (CatalogException e) {
            return scan.report(CatalogState.DAMAGED, e.getMessage(), Set.of(), Set.of(), Optional.empty(), false);
        }
    }

    /**
     * Moves the catalog (and its -wal/-shm) aside as {@code catalog.db.damaged-<time>} and writes a new one
     * holding every labelled artifact of the pool as a READY row owned by {@code nodeId}. Refuses a sound
     * catalog unless {@code force}: a rebuild loses what sidecars do not carry.
     */
    public static Report rebuild(Path dataDir, PoolStorage engine, String nodeId, boolean force, InstantSource clock) {
        Report before = check(dataDir, engine);
        if (before.state() == CatalogState.SOUND && !force) {
            throw new IllegalStateException("the catalog is sound; a rebuild would lose volume groups, publications and "
                    + "parameters (use --force to rebuild anyway)");
        }
        Scan scan = scan(engine, nodeId);
        Path file = dataDir.resolve(Catalog.FILE_NAME);
        Path fresh = dataDir.resolve(Catalog.FILE_NAME + ".rebuilding");
        try {
            for (String suffix : List.of("", "-wal", "-shm", "-journal")) Files.deleteIfExists(Path.of(fresh + suffix));
        } catch (IOException e) {
            throw new UncheckedIOException("removing an earlier attempt " + fresh, e);
        }
        List<String> unreadable = new ArrayList<>(scan.unreadable);
        try (Catalog catalog = Catalog.open(fresh, clock)) {
            catalog.inTransaction(tx -> {
                scan.groups.values().forEach(tx.groupSnapshots()::insert);
                for (VolumeRecord v : scan.volumes) {
                    if (tx.volumes().byName(v.name()).isPresent()) unreadable.add(v.id() + ": name '" + v.name() + "' is taken");
                    else tx.volumes().insert(v);
                }
                for (SnapshotRecord s : scan.snapshots) {
                    if (s.name() != null && tx.snapshots().byName(s.name()).isPresent()) {
                        unreadable.add(s.id() + ": name '" + s.name() + "' is taken");
                    } else {
                        tx.snapshots().insert(s);
                    }
                }
                return null;
            });
        }
        Optional<Path> aside = moveAside(file);
        try {
            Durable.atomicRename(fresh, file);
        } catch (RuntimeException e) {
            throw new CatalogException("the rebuilt catalog is in " + fresh + " but could not be renamed to " + file
                    + ": " + e.getMessage(), e);
        }
        Scan written = new Scan(scan.volumes, scan.snapshots, scan.groups, scan.unlabelled, unreadable);
        return written.report(before.state(), before.problem(), Set.of(), Set.of(), aside, true);
    }

    private static boolean isMissing(Path file) {
        try {
            return !Files.exists(file) || Files.size(file) == 0;
        } catch (IOException e) {
            throw new UncheckedIOException("reading " + file, e);
        }
    }

    private static Optional<Path> moveAside(Path file) {
        String stamp = STAMP.format(Instant.now());
        for (int n = 2; Files.exists(Path.of(file + ".damaged-" + stamp)); n++) {   // never replace an earlier one
            stamp = STAMP.format(Instant.now()) + "." + n;
        }
        Path aside = null;
        try {
            for (String suffix : List.of("", "-wal", "-shm", "-journal")) {
                Path from = Path.of(file + suffix);
                if (!Files.exists(from)) continue;
                Path to = Path.of(file + ".damaged-" + stamp + suffix);
                Files.move(from, to, StandardCopyOption.ATOMIC_MOVE);
                if (suffix.isEmpty()) aside = to;
            }
        } catch (IOException e) {
            throw new UncheckedIOException("moving " + file + " aside", e);
        }
        return Optional.ofNullable(aside);
    }

    /** The pool's labelled artifacts as catalog rows. */
    private record Scan(List<VolumeRecord> volumes, List<SnapshotRecord> snapshots, Map<String, GroupSnapshotRecord> groups,
                        Set<String> unlabelled, List<String> unreadable) {

        Report report(CatalogState state, String problem, Set<String> missing, Set<String> unowned, Optional<Path> aside,
                      boolean rebuilt) {
            return report(state, problem, missing, unowned, aside, rebuilt, Set.of(), Set.of());
        }

        Report report(CatalogState state, String problem, Set<String> missing, Set<String> unowned, Optional<Path> aside,
                      boolean rebuilt, Set<String> remade, Set<String> swept) {
            return new Report(state, problem, volumes.size(), snapshots.size(), groups.size(), missing, unowned, unlabelled,
                    unreadable, aside, rebuilt, remade, swept);
        }
    }

    private static Scan scan(PoolStorage engine, String nodeId) {
        Instant now = Instant.now();
        List<VolumeRecord> volumes = new ArrayList<>();
        List<SnapshotRecord> snapshots = new ArrayList<>();
        Map<String, GroupSnapshotRecord> groups = new LinkedHashMap<>();
        Set<String> unlabelled = new TreeSet<>();
        List<String> unreadable = new ArrayList<>();
        for (String id : new TreeSet<>(engine.volumeArtifacts())) {
            Optional<Artifact> a = read(engine, Artifact.Kind.VOLUME, id, unreadable);
            if (a.isEmpty()) continue;
            if (a.get().name().isEmpty()) { unlabelled.add(id); continue; }
            Artifact v = a.get();
            boolean block = v.access() instanceof AccessType.Block;
            String fsType = v.access() instanceof AccessType.Mount(String fs) && !fs.isEmpty() ? fs : null;
            volumes.add(new VolumeRecord(id, v.name(), v.sizeBytes(), block ? VolumeKind.BLOCK : VolumeKind.FILESYSTEM,
                    fsType, Map.of(), Map.of(), source(v.source()), nodeId, State.READY, v.createdAt(), now));
        }
        Map<String, List<String>> groupSources = new LinkedHashMap<>();
        for (String id : new TreeSet<>(engine.snapshotArtifacts())) {
            Optional<Artifact> a = read(engine, Artifact.Kind.SNAPSHOT, id, unreadable);
            if (a.isEmpty()) continue;
            Artifact s = a.get();
            if (s.name().isEmpty()) { unlabelled.add(id); continue; }
            String sourceVolume = s.source().startsWith("volume:") ? s.source().substring("volume:".length()) : "";
            String group = s.group().isEmpty() ? null : s.group();
            snapshots.add(new SnapshotRecord(id, group == null ? s.name() : null, sourceVolume, s.sizeBytes(), group,
                    Map.of(), State.READY, s.createdAt(), now));
            if (group != null) {
                groupSources.computeIfAbsent(group, g -> new ArrayList<>()).add(sourceVolume);
                Instant created = s.createdAt();
                groups.merge(group, new GroupSnapshotRecord(group, s.name(), List.of(), Map.of(), State.READY, created, now),
                        (old, next) -> old.createdAt().isBefore(next.createdAt()) ? old : next);
            }
        }
        groups.replaceAll((id, g) -> new GroupSnapshotRecord(id, g.name(), groupSources.get(id), Map.of(), State.READY,
                g.createdAt(), now));
        return new Scan(volumes, snapshots, groups, unlabelled, unreadable);
    }

    private static Optional<Artifact> read(PoolStorage engine, Artifact.Kind kind, String id, List<String> unreadable) {
        try {
            Optional<Artifact> a = engine.artifact(kind, id);
            if (a.isEmpty()) unreadable.add(id + ": no sidecar");
            return a;
        } catch (RuntimeException e) {
            unreadable.add(id + ": " + e.getMessage());
            return Optional.empty();
        }
    }

    private static ContentSource source(String source) {
        if (source.startsWith("volume:")) return new ContentSource.FromVolume(source.substring("volume:".length()));
        if (source.startsWith("snapshot:")) return new ContentSource.FromSnapshot(source.substring("snapshot:".length()));
        return ContentSource.NONE;
    }
}
