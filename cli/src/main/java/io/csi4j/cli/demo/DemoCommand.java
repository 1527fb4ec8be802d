package io.csi4j.cli.demo;

import io.csi4j.cli.ByteSize;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.logging.Level;
import java.util.logging.Logger;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code csi4j demo}: the volume lifecycle in a few seconds, against a plugin started just for it. */
@Command(name = "demo", sortOptions = false,
        description = {"Walk the volume lifecycle against a plugin started just for it, checking each step.",
                "The plugin runs on a temporary data directory with its own XFS pool image (so snapshots",
                "and clones are reflinks); the walk: create, write, snapshot, clone, restore, group,",
                "group-snapshot, publish, expand, clean up. Exit 0 only if every check passed.",
                "Needs root (loop devices and mounts)."})
public final class DemoCommand implements Callable<Integer> {
    // JUL keeps loggers weakly: hold the ones whose level we change
    private static final Logger CSI4J = Logger.getLogger("io.csi4j");
    private static final Logger GRPC = Logger.getLogger("io.grpc");

    @Spec
    CommandSpec spec;

    @Option(names = "--work-dir", paramLabel = "DIR", defaultValue = "${sys:java.io.tmpdir}",
            description = "Where the temporary directory goes. Default: ${DEFAULT-VALUE}")
    Path workDir;

    @Option(names = "--pool-size", paramLabel = "SIZE", converter = ByteSize.class, defaultValue = "1Gi",
            description = "Size of the demo's sparse XFS pool image (at least 300Mi). Default: ${DEFAULT-VALUE}")
    long poolSize;

    @Override
    public Integer call() {
        var out = spec.commandLine().getOut();
        if (!"root".equals(System.getProperty("user.name"))) {
            throw new IllegalStateException("the demo needs root: it attaches loop devices and mounts filesystems (try sudo)");
        }
        Level csi4jLevel = CSI4J.getLevel();
        Level grpcLevel = GRPC.getLevel();
        CSI4J.setLevel(Level.WARNING); // the plugin's call log would drown the walkthrough
        GRPC.setLevel(Level.WARNING);
        long start = System.nanoTime();
        var w = new Walkthrough(workDir, poolSize, out);
        try {
            out.println("csi4j demo: the local.csi4j.io plugin in this process, called over its UNIX socket as Kubernetes would");
            out.println();
            w.step("start the plugin", w::start);
            w.step("create two volumes", w::createVolumes);
            w.step("write data into them", w::writeData);
            w.step("snapshot alpha", w::snapshot);
            w.step("clone alpha", w::cloneVolume);
            w.step("restore the snapshot", w::restore);
            w.step("group alpha and beta", w::group);
            w.step("group-snapshot alpha and beta", w::groupSnapshot);
            w.step("publish clone and restore, show them", w::publishAndShow);
            w.step("expand alpha", w::expand);
            if (w.started()) {
                w.always("clean up", w::cleanUp);
                w.always("stop the plugin", w::stop);
            }
            out.println();
            double seconds = (System.nanoTime() - start) / 1e9;
            if (w.failed() == 0) {
                out.println(String.format(Locale.ROOT, "demo passed: every step checked its result, %.1f s in all", seconds));
                return 0;
            }
            out.println(String.format(Locale.ROOT, "demo FAILED: %d step(s) failed, %.1f s", w.failed(), seconds));
            return 1;
        } finally {
            out.flush();
            try {
                w.close();
            } catch (RuntimeException e) {
                spec.commandLine().getErr().println("csi4j: demo clean-up: " + e.getMessage());
            }
            CSI4J.setLevel(csi4jLevel);
            GRPC.setLevel(grpcLevel);
        }
    }
}
