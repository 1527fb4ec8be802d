package io.csi4j.driver.engine;

import static io.csi4j.driver.engine.EngineErrors.translate;

import io.csi4j.driver.os.MountTable;
import io.csi4j.driver.storage.StorageException;
import java.util.List;

/** A freeze hold of directories ({@link Freezer}): nothing can be frozen, so members published writable are refused. */
final class DirFreezer implements Freezer {
    private final DirEngine engine;

    DirFreezer(DirEngine engine) {
        this.engine = engine;
    }

    /** A directory cannot be frozen: the hold only checks that no member is published writable. */
    @Override
    public FreezeHold holdFrozen(List<String> volumeIds) {
        List<String> ids = volumeIds.stream().map(id -> PoolLayout.checkId("volume", id)).toList();
        return translate("holding " + ids, () -> {
            MountTable table = MountTable.read();
            for (String volumeId : ids) {
                engine.store.require(Artifact.Kind.VOLUME, volumeId);
                if (engine.mountsOf(table, volumeId).stream().anyMatch(m -> !m.readOnly())) {
                    throw StorageException.inUse("volume " + volumeId
                            + " is published writable; a directory cannot be frozen, so a group snapshot could not be write-order consistent");
                }
            }
            return new FreezeHold(ids, null);
        });
    }
}
