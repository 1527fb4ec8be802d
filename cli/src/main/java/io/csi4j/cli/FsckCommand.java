package io.csi4j.cli;

import io.csi4j.driver.engine.StorageEngine;
import io.csi4j.driver.engine.open.Engines;
import io.csi4j.driver.reconcile.CatalogRebuild;
import io.csi4j.driver.storage.DataDir;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.InstantSource;
import java.util.OptionalLong;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code csi4j fsck}: checks the catalog against the pool and, with {@code --rebuild}, rebuilds a missing or
 * damaged catalog from the sidecars beside the volumes and snapshots. Run it with the plugin stopped.
 * Exit codes: 0 consistent (or rebuilt), 1 problems found, 2 could not run.
 */
@Command(name = "fsck", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Check the catalog against the pool; --rebuild writes a new catalog from the pool's sidecars.")
public final class FsckCommand implements Callable<Integer> {

    @Mixin
    PluginDataOptions data;

    @Option(names = "--rebuild", description = "Move the catalog aside (never deleted) and rebuild it from the pool")
    boolean rebuild;

    @Option(names = "--force", description = "With --rebuild: rebuild even a sound catalog (loses volume groups, "
            + "publications and parameters, which only the catalog holds)")
    boolean force;

    @Override
    public Integer call() {
        Path dataDir = data.dataDir;
        if (!Files.isDirectory(dataDir)) {
            System.err.println("csi4j fsck: " + dataDir + " is not a directory");
            return 2;
        }
        DataDir layout = new DataDir(dataDir);
        if (DataDirUse.serving(layout.csiSocket())) {
            System.err.println("csi4j fsck: a plugin is serving on " + layout.csiSocket() + "; stop it first: fsck compares "
                    + "the catalog with the pool, which a serving plugin changes under it (a live plugin answers "
                    + "csi4j controller list-volumes and get-volume, with each volume's condition)");
            return 2;
        }
        OptionalLong poolSize;
        try {
            poolSize = layout.poolImageBytes();  // the pool as it is: an image at its own size, or the directory
        } catch (UncheckedIOException e) {
            System.err.println("csi4j fsck: " + e.getMessage());
            return 2;
        }
        try (StorageEngine storage = Engines.open(data.engine, layout, poolSize, 1.0)) {
            CatalogRebuild.Report report = rebuild
                    ? CatalogRebuild.rebuild(dataDir, storage, data.nodeIdOrHostName(), force, InstantSource.system())
                    : CatalogRebuild.check(dataDir, storage);
            report.lines().forEach(line -> System.out.println("csi4j fsck: " + line));
            if (report.rebuilt() || report.consistent()) return 0;
            if (!rebuild && report.state() != CatalogRebuild.CatalogState.SOUND) {
                System.out.println("csi4j fsck: run with --rebuild to write a new catalog from the pool");
            }
            return 1;
        } catch (IllegalStateException e) {
            System.err.println("csi4j fsck: " + e.getMessage());
            return 2;
        }
    }
}
