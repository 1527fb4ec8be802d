package io.csi4j.cli.bench;

import io.csi4j.cli.ByteSize;
import io.csi4j.cli.call.CapabilityConverter;
import io.csi4j.cli.call.DurationConverter;
import io.csi4j.cli.call.SecretOptions;
import io.csi4j.cli.call.Session;
import io.csi4j.proto.csi.VolumeCapability;
import io.csi4j.sdk.server.Endpoint;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine;

/** {@code csi4j bench}: a load generator for any CSI plugin, and {@code --compare} for two of its reports. */
@Command(name = "bench", sortOptions = false,
        description = {"Load any CSI plugin with one scenario and print throughput and latency percentiles.",
                "Scenarios: create-delete (CreateVolume+DeleteVolume), snapshot (CreateSnapshot+DeleteSnapshot of one volume), "
                        + "clone (CreateVolume from one volume+DeleteVolume), restore (CreateVolume from a snapshot+DeleteVolume), "
                        + "group-snapshot (CreateVolumeGroupSnapshot of --group-size volumes+its delete), "
                        + "list (ListVolumes to the last page), stage-publish (Stage/Publish/Unpublish/Unstage of one volume per worker), "
                        + "probe (Identity Probe), mixed (a cycle of probe, list page, create-delete, snapshot).",
                "Everything the run creates is deleted at the end, also after Ctrl-C.",
                "bench --compare a.json b.json prints two reports side by side."})
public final class BenchCommand implements Callable<Integer> {
    enum Scenario {
        CREATE_DELETE, SNAPSHOT, CLONE, RESTORE, GROUP_SNAPSHOT, LIST, STAGE_PUBLISH, PROBE, MIXED;

        String label() {
            return name().toLowerCase().replace('_', '-');
        }
    }

    @Spec
    CommandSpec spec;

    @Option(names = "--endpoint", paramLabel = "URL", description = "Plugin endpoint. Default: $CSI_ENDPOINT")
    String endpoint;

    @Option(names = "--scenario", paramLabel = "NAME", converter = ScenarioConverter.class, defaultValue = "create-delete",
            description = "create-delete, snapshot, clone, restore, group-snapshot, list, stage-publish, probe or mixed. "
                    + "Default: ${DEFAULT-VALUE}")
    Scenario scenario;

    @Option(names = "--requests", paramLabel = "N",
            description = "Iterations to run. Default: 1000, or unlimited with --duration")
    Long requests;

    @Option(names = "--concurrency", paramLabel = "C", defaultValue = "8", description = "Parallel workers (virtual threads). Default: ${DEFAULT-VALUE}")
    int concurrency;

    @Option(names = "--duration", paramLabel = "DURATION", converter = DurationConverter.class,
            description = "Stop after this long (e.g. 30s), or at --requests, whichever comes first")
    Duration duration;

    @Option(names = "--rate", paramLabel = "PER_SECOND", defaultValue = "0",
            description = "Start iterations on a fixed schedule, this many per second in all (open loop: slow answers do not "
                    + "slow it down, so latencies show queueing); 0 = as fast as the workers go. Default: ${DEFAULT-VALUE}")
    double rate;

    @Option(names = "--fill", paramLabel = "SIZE", converter = ByteSize.class, defaultValue = "0",
            description = "snapshot, clone, restore, group-snapshot, mixed: stage and publish each source volume on this node "
                    + "and write this much data into it first (it stays published while measuring). Default: none")
    long fill;

    @Option(names = "--group-size", paramLabel = "N", defaultValue = "8",
            description = "Volumes in each group snapshot (group-snapshot). Default: ${DEFAULT-VALUE}")
    int groupSize;

    @Option(names = "--prefill", paramLabel = "M", defaultValue = "0",
            description = "Create M volumes before measuring, to see how cost grows with the number of objects")
    long prefill;

    @Option(names = "--size", paramLabel = "SIZE", converter = ByteSize.class, defaultValue = "16Mi",
            description = "Size of each volume created. Default: ${DEFAULT-VALUE}")
    long size;

    @Option(names = "--cap", paramLabel = "CAP", converter = CapabilityConverter.class, defaultValue = CapabilityConverter.DEFAULT,
            description = "Capability of the volumes, MODE,mount|block[,FSTYPE[,FLAGS]]. Default: ${DEFAULT-VALUE}")
    VolumeCapability capability;

    @Option(names = "--param", paramLabel = "KEY=VALUE", description = "A CreateVolume parameter (repeatable)")
    Map<String, String> parameters = Map.of();

    @Mixin
    SecretOptions secrets;

    @Option(names = "--page-size", paramLabel = "N", defaultValue = "0",
            description = "max_entries of ListVolumes in the list scenario; 0 lets the plugin choose. Default: ${DEFAULT-VALUE}")
    int pageSize;

    @Option(names = "--timeout", paramLabel = "DURATION", converter = DurationConverter.class, defaultValue = "60s",
            description = "Deadline of each call. Default: ${DEFAULT-VALUE}")
    Duration timeout;

    @Option(names = "--out", paramLabel = "FILE.json", description = "Write the figures (and every latency sample) as JSON")
    Path out;

    @Option(names = "--no-progress", description = "No progress line on stderr")
    boolean noProgress;

    @Option(names = "--compare", arity = "2", paramLabel = "FILE.json", description = "Compare two reports written by --out; runs nothing")
    List<Path> compare;

    @Override
    public Integer call() {
        var stdout = spec.commandLine().getOut();
        var stderr = spec.commandLine().getErr();
        if (compare != null) {
            Comparison.print(compare.get(0).toString(), read(compare.get(0)), compare.get(1).toString(), read(compare.get(1)), stdout);
            return 0;
        }
        if (concurrency < 1) throw new IllegalArgumentException("--concurrency must be at least 1");
        if (requests != null && requests < 1) throw new IllegalArgumentException("--requests must be at least 1");
        if (prefill < 0) throw new IllegalArgumentException("--prefill must not be negative");
        long n = requests != null ? requests : duration != null ? 0 : 1000;
        if (rate < 0) throw new IllegalArgumentException("--rate must not be negative");
        if (groupSize < 1) throw new IllegalArgumentException("--group-size must be at least 1");
        var settings = new BenchRun.Settings(scenario.label(), n, concurrency, prefill, Optional.ofNullable(duration), size,
                capability, parameters, secrets.secrets(), !noProgress, System.console() != null, rate, fill, groupSize);
        Workload workload = switch (scenario) {
            case CREATE_DELETE -> new Workload.CreateDelete();
            case SNAPSHOT -> new Workload.SnapshotCreateDelete();
            case CLONE -> new Workload.CloneDelete();
            case RESTORE -> new Workload.RestoreDelete();
            case GROUP_SNAPSHOT -> new Workload.GroupSnapshotDelete();
            case LIST -> new Workload.ListAll(pageSize);
            case STAGE_PUBLISH -> new Workload.StagePublish();
            case PROBE -> new Workload.Probe();
            case MIXED -> new Workload.Mixed();
        };
        try (var session = new Session(Endpoint.resolve(Optional.ofNullable(endpoint), System.getenv()), timeout)) {
            var run = new BenchRun(session, settings, workload, stderr);
            var cleanupFailures = new ArrayList<String>();
            var finished = new CountDownLatch(1);
            // Ctrl-C: let the workers stop and the clean-up run before the JVM goes
            Thread hook = new Thread(() -> {
                run.stop();
                try {
                    finished.await(2, TimeUnit.MINUTES);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "csi4j-bench-stop");
            Runtime.getRuntime().addShutdownHook(hook);
            BenchReport report;
            try {
                report = run.run(cleanupFailures);
                report.print(stdout);
                run.firstFailure().ifPresent(f -> stdout.println("first failure: " + f));
                stdout.flush();
                if (out != null) write(out, report.toJson());
                if (!cleanupFailures.isEmpty()) {
                    stderr.println("csi4j: clean-up left objects behind:");
                    cleanupFailures.forEach(f -> stderr.println("  " + f));
                    stderr.flush();
                }
            } finally {
                // after the report is out: a Ctrl-C hook waiting on this lets the JVM go now
                finished.countDown();
                try {
                    Runtime.getRuntime().removeShutdownHook(hook);
                } catch (IllegalStateException shuttingDown) {
                    // the JVM is already exiting: the hook has run
                }
            }
            if (!cleanupFailures.isEmpty()) return 1;
            return report.iterations() == 0 || report.failedIterations() == report.iterations() ? 1 : 0;
        }
    }

    private static BenchReport read(Path file) {
        try {
            return BenchReport.fromJson(Files.readString(file));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(file + ": " + e.getMessage(), e);
        }
    }

    private static void write(Path file, String json) {
        try {
            Path parent = file.toAbsolutePath().getParent();
            if (parent != null) Files.createDirectories(parent);
            Files.writeString(file, json);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
    }

    static final class ScenarioConverter implements CommandLine.ITypeConverter<Scenario> {
        @Override
        public Scenario convert(String value) {
            for (Scenario s : Scenario.values()) if (s.label().equalsIgnoreCase(value) || s.name().equalsIgnoreCase(value)) return s;
            throw new CommandLine.TypeConversionException("unknown scenario '" + value
                    + "'; one of create-delete, snapshot, clone, restore, group-snapshot, list, stage-publish, probe, mixed");
        }
    }
}
