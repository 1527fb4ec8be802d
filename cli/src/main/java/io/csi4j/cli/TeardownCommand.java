package io.csi4j.cli;

import io.csi4j.driver.engine.Binds;
import io.csi4j.driver.os.LoopDevice;
import io.csi4j.driver.os.MountTable;
import io.csi4j.driver.reconcile.NodeTeardown;
import io.csi4j.driver.storage.DataDir;
import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code csi4j teardown}: after {@code serve} stopped, removes what it left in the kernel for its data directory
 * (stages, publishes, the pool's mount, loop devices; {@link NodeTeardown}); with {@code --delete-data} also the data
 * directory. Refused while a plugin uses the directory. Idempotent. Exit codes: 0 nothing left, 1 something could
 * not be removed (each named), 2 could not run.
 */
@Command(name = "teardown", mixinStandardHelpOptions = true, sortOptions = false,
        description = "After serve stopped: unmount its stages, publishes and pool and detach its loop devices; "
                + "--delete-data also removes the data directory.")
public final class TeardownCommand implements Callable<Integer> {

    @Option(names = "--data-dir", paramLabel = "DIR", defaultValue = "./csi4j-data",
            description = "The stopped plugin's data directory. Default: ${DEFAULT-VALUE}")
    Path dataDir;

    @Option(names = "--delete-data", description = "Also delete the data directory (every volume and snapshot in it)")
    boolean deleteData;

    @Override
    public Integer call() {
        if (!Files.isDirectory(dataDir)) {
            System.out.println("csi4j teardown: " + dataDir + " does not exist: nothing to remove");
            return 0;
        }
        Path dir;
        try {
            dir = dataDir.toRealPath();   // mountinfo and sysfs show canonical paths
        } catch (IOException e) {
            System.err.println("csi4j teardown: " + dataDir + ": " + e.getMessage());
            return 2;
        }
        Optional<String> busy = DataDirUse.inUse(new DataDir(dir));
        if (busy.isPresent()) {
            System.err.println("csi4j teardown: " + busy.get() + "; stop it first (teardown removes the mounts and loop "
                    + "devices its volumes are served from)");
            return 2;
        }
        Path pool = dir.resolve(DataDir.POOL);
        var report = NodeTeardown.run(() -> {
            MountTable table = MountTable.read();
            return NodeTeardown.plan(dir, table, LoopDevice.list(), poolDirectory(table, pool));
        }, line -> System.out.println("csi4j teardown: " + line));
        report.failed().forEach(line -> System.err.println("csi4j teardown: cannot remove " + line));
        if (!report.failed().isEmpty()) return 1;
        if (report.removed().isEmpty()) System.out.println("csi4j teardown: nothing of " + dir + " is mounted or attached");
        if (!deleteData) {
            System.out.println("csi4j teardown: the data stays in " + dir + " (--delete-data removes it)");
            return 0;
        }
        return delete(dir);
    }

    /** A pool that is a plain directory (not a mount point): binds of its subdirectories are its volumes' publishes. */
    private static NodeTeardown.PoolDirectory poolDirectory(MountTable table, Path pool) {
        if (!Files.isDirectory(pool) || table.isMountPoint(pool)) return null;
        return Binds.identity(table, pool).map(id -> new NodeTeardown.PoolDirectory(id.major(), id.minor(), id.root())).orElse(null);
    }

    /** Deletes the directory's contents and the directory, never crossing into a mount (refused when one is left). */
    private static int delete(Path dir) {
        var under = MountTable.read().under(dir).stream().filter(m -> !m.mountPoint().equals(dir)).toList();
        if (!under.isEmpty()) {
            System.err.println("csi4j teardown: " + under.getFirst().mountPoint() + " is still mounted; not deleting " + dir);
            return 1;
        }
        boolean mountPoint = MountTable.read().isMountPoint(dir);
        try {
            Files.walkFileTree(dir, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    Files.delete(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
                    if (e != null) throw e;
                    if (!d.equals(dir) || !mountPoint) Files.delete(d);
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException e) {
            System.err.println("csi4j teardown: deleting " + dir + ": " + e);
            return 1;
        }
        System.out.println("csi4j teardown: deleted " + dir + (mountPoint ? "'s contents (it is a mount point: it stays)" : ""));
        return 0;
    }
}
