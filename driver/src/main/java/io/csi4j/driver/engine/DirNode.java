package io.csi4j.driver.engine;

import static io.csi4j.driver.engine.EngineErrors.run;
import static io.csi4j.driver.engine.EngineErrors.translate;

import io.csi4j.driver.engine.PoolLayout.EntryType;
import io.csi4j.driver.os.FsStats;
import io.csi4j.driver.os.MountInfo;
import io.csi4j.driver.os.MountTable;
import io.csi4j.driver.os.ProjectQuota;
import io.csi4j.driver.storage.StorageException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/** The dir engine's node side ({@link NodeStorage}): nothing to attach or stage, publish is a bind mount. */
final class DirNode implements NodeStorage {
    private final DirEngine engine;

    DirNode(DirEngine engine) {
        this.engine = engine;
    }

    @Override
    public List<Path> mountPoints(String volumeId) {
        PoolLayout.checkId("volume", volumeId);
        return translate("looking up mounts of volume " + volumeId,
                () -> engine.mountsOf(MountTable.read(), volumeId).stream().map(MountInfo::mountPoint).distinct().sorted().toList());
    }

    /** Nothing to attach or mount: checks that the volume exists and the capability fits. */
    @Override
    public void stage(String volumeId, Path stagingPath, StageOptions options) {
        PoolLayout.checkId("volume", volumeId);
        if (options instanceof StageOptions.Block) throw StorageException.invalid("the dir engine has no block volumes");
        MountOptions.parse(((StageOptions.Mount) options).mountFlags());
        run("staging volume " + volumeId, () -> engine.requireVolume(volumeId));
    }

    @Override
    public void unstage(String volumeId, Path stagingPath) {
        PoolLayout.checkId("volume", volumeId);
        run("unstaging volume " + volumeId, () -> {
            if (!engine.layout.exists(Artifact.Kind.VOLUME, volumeId, EntryType.DIRECTORY)) return;
            List<MountInfo> mounts = engine.mountsOf(MountTable.read(), volumeId);
            if (!mounts.isEmpty()) {
                throw StorageException.inUse("volume " + volumeId + " is still published at "
                        + mounts.stream().map(MountInfo::mountPoint).toList());
            }
        });
    }

    /** Filesystem-specific mount options mean nothing for a bind of a directory and are ignored. */
    @Override
    public void publish(String volumeId, Path stagingPath, Path targetPath, PublishOptions options) {
        PoolLayout.checkId("volume", volumeId);
        if (options.block()) throw StorageException.invalid("the dir engine has no block volumes");
        MountOptions mountOptions = MountOptions.parse(options.mountFlags());
        run("publishing volume " + volumeId + " at " + targetPath, () -> {
            Path dir = engine.requireVolume(volumeId);
            // made without a sync at create (derivable from its row while blank): durable before anything is written in
            engine.layout.syncArtifact(Artifact.Kind.VOLUME, volumeId);
            if (options.volumeMountGroup().isPresent()) Binds.grantGroup(dir, options.volumeMountGroup().getAsInt());
            Binds.bindDirectory(dir, targetPath, options.readOnly(), mountOptions);
        });
    }

    @Override
    public void unpublish(String volumeId, Path targetPath) {
        PoolLayout.checkId("volume", volumeId);
        run("unpublishing volume " + volumeId + " from " + targetPath, () -> {
            MountTable table = MountTable.read();
            Optional<MountInfo> there = table.at(targetPath);
            if (there.isPresent() && PoolLayout.type(engine.dir(volumeId)) == EntryType.DIRECTORY) {
                boolean ours = Binds.identity(table, engine.dir(volumeId)).filter(id -> id.matches(there.get())).isPresent();
                if (!ours) {
                    throw StorageException.inUse(targetPath + " has " + there.get().source() + ":" + there.get().root()
                            + " mounted, not volume " + volumeId);
                }
            }
            Binds.unmountAndRemove(targetPath);
        });
    }

    /** The project quota's numbers when capacity is enforced (capped by what the pool has free); else the pool's. */
    @Override
    public VolumeStats stats(String volumeId, Path volumePath) {
        PoolLayout.checkId("volume", volumeId);
        return translate("stats of volume " + volumeId + " at " + volumePath, () -> {
            if (PoolLayout.type(volumePath) == EntryType.MISSING) throw StorageException.notFound(volumePath + " does not exist");
            Path real = Binds.canonical(volumePath);
            if (engine.mountsOf(MountTable.read(), volumeId).stream().noneMatch(m -> m.mountPoint().equals(real))) {
                throw StorageException.notFound("volume " + volumeId + " is not published at " + volumePath);
            }
            Optional<String> abnormal = engine.volumeCondition(volumeId);
            FsStats fs = FsStats.of(volumePath);
            Optional<ProjectQuota.Usage> quota = engine.quotaUsage(volumeId).filter(u -> u.limitBytes() > 0);
            if (quota.isPresent()) {
                ProjectQuota.Usage u = quota.get();
                long available = Math.max(0, Math.min(u.limitBytes() - u.usedBytes(), fs.availableBytes()));
                return new VolumeStats(u.limitBytes(), u.usedBytes(), available,
                        fs.totalInodes(), u.inodes(), fs.freeInodes(), abnormal);
            }
            return new VolumeStats(fs.totalBytes(), fs.totalBytes() - fs.freeBytes(), fs.availableBytes(),
                    fs.totalInodes(), fs.totalInodes() - fs.freeInodes(), fs.freeInodes(), abnormal);
        });
    }

    @Override
    public long nodeExpand(String volumeId, Path volumePath) {
        PoolLayout.checkId("volume", volumeId);
        return translate("expanding volume " + volumeId, () -> {
            engine.requireVolume(volumeId);
            return engine.layout.readSidecar(Artifact.Kind.VOLUME, volumeId).map(Artifact::sizeBytes).orElse(0L);
        });
    }
}
