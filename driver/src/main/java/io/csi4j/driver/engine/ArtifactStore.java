package io.csi4j.driver.engine;

import static io.csi4j.driver.engine.EngineErrors.run;
import static io.csi4j.driver.engine.EngineErrors.translate;

import io.csi4j.driver.engine.PoolLayout.EntryType;
import io.csi4j.driver.storage.StorageException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * What both engines do the same way with the artifacts in their pool, whatever an artifact is (an image file or a
 * directory): list them, read and relabel their sidecars, tell whether one holds data, make deletes durable and
 * sweep leftovers. The engines differ in how they make, cut, attach and measure artifacts, not in this.
 */
public final class ArtifactStore {
    private final PoolLayout layout;
    private final EntryType type;

    ArtifactStore(PoolLayout layout, EntryType type) {
        this.layout = layout;
        this.type = type;
    }

    public PoolLayout layout() {
        return layout;
    }

    /** Whether the artifact exists as this store's type; IN_USE when something else sits under its name. */
    public boolean exists(Artifact.Kind kind, String id) {
        return layout.exists(kind, id, type);
    }

    /** NOT_FOUND unless the artifact exists (as this store's type). */
    public void require(Artifact.Kind kind, String id) {
        require(kind, id, PoolLayout.kindName(kind));
    }

    public void require(Artifact.Kind kind, String id, String what) {
        if (!exists(kind, id)) throw StorageException.notFound(what + " " + id + " does not exist");
    }

    public Set<String> ids(Artifact.Kind kind) {
        return translate("listing " + PoolLayout.kindName(kind) + "s", () -> layout.ids(kind));
    }

    /** The sidecar of an existing artifact (empty when either is missing), unchecked for size. */
    public Optional<Artifact> sidecar(Artifact.Kind kind, String id) {
        PoolLayout.checkId(PoolLayout.kindName(kind), id);
        return translate("reading " + id, () -> exists(kind, id) ? layout.readSidecar(kind, id) : Optional.empty());
    }

    /** The sidecar, or empty when it is missing or torn (a power cut after an unsynced write). */
    public Optional<Artifact> readableSidecar(Artifact.Kind kind, String id) {
        try {
            return layout.readSidecar(kind, id);
        } catch (IllegalArgumentException | UncheckedIOException torn) {
            return Optional.empty();
        }
    }

    /**
     * The end of re-making a blank artifact from its row: a missing or torn sidecar is written from
     * {@code description}, then artifact, sidecar and their names are made durable. True if the sidecar was written.
     */
    public boolean settleBlank(Artifact description) {
        boolean rewritten = readableSidecar(description.kind(), description.id()).isEmpty();
        if (rewritten) layout.writeSidecarUnsynced(description);
        layout.syncArtifact(description.kind(), description.id());
        return rewritten;
    }

    /** Writes {@code label} into an existing artifact's sidecar if it says otherwise (nothing for NONE). */
    public void relabel(Artifact.Kind kind, String id, Artifact.Label label) {
        if (!label.equals(Artifact.Label.NONE)) layout.rewriteSidecar(kind, id, type, a -> a.withLabel(label));
    }

    /** Deletes an artifact and its sidecar, durably; nothing when it is gone already; IN_USE for a symlink in its place. */
    public void delete(Artifact.Kind kind, String id) {
        PoolLayout.checkId(PoolLayout.kindName(kind), id);
        run("deleting " + PoolLayout.kindName(kind) + " " + id, () -> {
            exists(kind, id);  // refuses a symlink or an entry of the other type there
            layout.delete(kind, id);
        });
    }

    public boolean holdsData(Artifact.Kind kind, String id) {
        PoolLayout.checkId(PoolLayout.kindName(kind), id);
        return translate("looking into " + id, () -> layout.holdsData(kind, id));
    }

    public void syncDeletes() {
        run("syncing " + layout.dir(Artifact.Kind.VOLUME), () -> layout.syncDirectory(Artifact.Kind.VOLUME));
    }

    public List<Path> sweep() {
        return translate("sweeping " + layout.tmpDir(), layout::sweep);
    }
}
