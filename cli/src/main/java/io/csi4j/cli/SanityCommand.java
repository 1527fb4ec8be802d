package io.csi4j.cli;

import io.csi4j.cli.call.DurationConverter;
import io.csi4j.testkit.AccessType;
import io.csi4j.testkit.SanityConfig;
import io.csi4j.testkit.SanityMain;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code csi4j sanity}: the conformance suite against any running plugin. */
@Command(name = "sanity", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Run the CSI (and CSI-Addons) conformance suite against a running plugin.",
                "Exit codes: 0 nothing failed, 1 a test failed, 2 bad command line or JUnit report not written,",
                "3 the plugin stopped answering (the tests after it are not run; see --keep-going)."})
public final class SanityCommand implements Callable<Integer> {

    @Option(names = "--endpoint", paramLabel = "URL", description = "The plugin's CSI endpoint. Default: $CSI_ENDPOINT")
    String endpoint;

    @Option(names = "--addons-endpoint", paramLabel = "URL", description = "The plugin's CSI-Addons endpoint: adds the VolumeGroup tests")
    String addonsEndpoint;

    @Option(names = "--node-endpoint", paramLabel = "URL",
            description = "A split deployment's node plugin (Identity, Node) when --endpoint serves the controller side only, e.g. a cluster controller")
    String nodeEndpoint;

    @Option(names = "--staging-dir", paramLabel = "DIR", description = "Where staging paths are made. Default: a temp dir")
    Path stagingDir;

    @Option(names = "--target-dir", paramLabel = "DIR", description = "Where target paths are made. Default: a temp dir")
    Path targetDir;

    @Option(names = "--volume-size", paramLabel = "SIZE", converter = ByteSize.class, defaultValue = "1Gi",
            description = "Size of the volumes the suite creates. Default: ${DEFAULT-VALUE}")
    long volumeSize;

    @Option(names = "--params", paramLabel = "K=V", description = "CreateVolume parameters (repeatable)")
    List<String> params = List.of();

    @Option(names = "--mutable-params", paramLabel = "K=V", description = "Mutable parameters for the ControllerModifyVolume test (repeatable)")
    List<String> mutableParams = List.of();

    @Option(names = "--secrets", paramLabel = "FILE", description = "Secrets file: key=value per line, sent in every request with secrets")
    Path secrets;

    @Option(names = "--access-type", paramLabel = "mount|block", defaultValue = "mount",
            description = "Access type of the lifecycle tests. Default: ${DEFAULT-VALUE}")
    String accessType;

    @Option(names = "--fs-type", paramLabel = "TYPE", description = "fs_type asked for mount volumes")
    String fsType;

    @Option(names = "--junit", paramLabel = "FILE", description = "Also write a JUnit XML report")
    Path junit;

    @Option(names = "--focus", paramLabel = "REGEX", description = "Run only tests whose name matches")
    String focus;

    @Option(names = {"--call-timeout", "--timeout"}, paramLabel = "DURATION", defaultValue = "60s", converter = DurationConverter.class,
            description = "Deadline of every call (60, 30s, 500ms, 2m): a plugin that hangs fails that test with DEADLINE_EXCEEDED. Default: ${DEFAULT-VALUE}")
    Duration callTimeout;

    @Option(names = "--keep-going", description = "When the plugin stops answering, reconnect (waiting up to one call timeout) and go on: for a plugin under a supervisor")
    boolean keepGoing;

    @Override
    public Integer call() throws Exception {
        String target = endpoint != null ? endpoint : System.getenv("CSI_ENDPOINT");
        if (target == null || target.isBlank()) {
            System.err.println("csi4j sanity: no endpoint: pass --endpoint or set CSI_ENDPOINT");
            return SanityMain.NOT_RUN_AT_ALL;
        }
        var builder = SanityConfig.builder(target)
                .volumeSize(volumeSize)
                .params(pairs(params, "--params"))
                .mutableParams(pairs(mutableParams, "--mutable-params"))
                .accessType(switch (accessType) {
                    case "mount" -> AccessType.MOUNT;
                    case "block" -> AccessType.BLOCK;
                    default -> throw new IllegalArgumentException("--access-type must be mount or block");
                })
                .callTimeout(callTimeout)
                .keepGoing(keepGoing)
                .focus(focus);
        if (addonsEndpoint != null) builder.addonsEndpoint(addonsEndpoint);
        if (nodeEndpoint != null) builder.nodeEndpoint(nodeEndpoint);
        if (stagingDir != null) builder.stagingDir(stagingDir);
        if (targetDir != null) builder.targetDir(targetDir);
        if (secrets != null) builder.secrets(SanityConfig.readSecrets(secrets));
        if (fsType != null) builder.fsType(fsType);
        return SanityMain.run(builder.build(), junit, System.out);
    }

    static Map<String, String> pairs(List<String> values, String flag) {
        var map = new LinkedHashMap<String, String>();
        for (String v : values) {
            int eq = v.indexOf('=');
            if (eq <= 0) throw new IllegalArgumentException(flag + " wants key=value, not '" + v + "'");
            map.put(v.substring(0, eq), v.substring(eq + 1));
        }
        return map;
    }
}
