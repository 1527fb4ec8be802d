package io.csi4j.testkit;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The command line of {@code java -jar csi4j-testkit.jar}: the flags of {@code csi4j sanity}, parsed without a
 * library (the testkit stays dependency-light). {@code --flag value} and {@code --flag=value} both work.
 */
sealed interface SanityArgs {
    record Help() implements SanityArgs {}
    record ListTests() implements SanityArgs {}
    record Run(SanityConfig config, Path junit) implements SanityArgs {}

    String USAGE = """
            Usage: java -jar csi4j-testkit.jar --endpoint URL [options]
            Run the CSI (and CSI-Addons) conformance suite against a running plugin.

              --endpoint URL           the plugin's CSI endpoint: unix:///path, a bare path, or tcp://host:port
                                       (default: $CSI_ENDPOINT)
              --addons-endpoint URL    the plugin's CSI-Addons endpoint: adds the VolumeGroup tests
              --node-endpoint URL      a split deployment's node plugin: Node calls go there, the rest to --endpoint
              --staging-dir DIR        where staging paths are made (default: a temp dir)
              --target-dir DIR         where target paths are made (default: a temp dir)
              --volume-size SIZE       size of the volumes the suite creates, e.g. 1Gi (default: 1Gi)
              --params K=V             CreateVolume parameters (repeatable)
              --mutable-params K=V     mutable parameters for the ControllerModifyVolume test (repeatable)
              --secrets FILE           key=value per line, sent in every request with secrets
              --access-type mount|block  access type of the lifecycle tests (default: mount)
              --fs-type TYPE           fs_type asked for mount volumes
              --focus REGEX            run only tests whose name matches
              --call-timeout DURATION  deadline of every call: 60, 30s, 500ms, 2m (default: 60s; alias --timeout)
              --keep-going             when the plugin stops answering, reconnect (waiting up to one call timeout)
                                       and go on: for a plugin under a supervisor
              --junit FILE             also write a JUnit XML report
              --list                   print the names of all tests and exit
              -h, --help               print this help and exit

            Exit codes: 0 nothing failed, 1 a test failed, 2 bad command line or JUnit report not written,
            3 the plugin stopped answering (the tests after it are not run; see --keep-going).
            """;

    static SanityArgs parse(String[] args, String defaultEndpoint) throws IOException {
        String endpoint = defaultEndpoint;
        List<String> params = new ArrayList<>();
        List<String> mutable = new ArrayList<>();
        // options are gathered first: the builder needs the endpoint
        List<String[]> options = new ArrayList<>();
        boolean keepGoing = false;
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            switch (arg) {
                case "-h", "--help" -> { return new Help(); }
                case "--list" -> { return new ListTests(); }
                case "--keep-going" -> { keepGoing = true; continue; }
                default -> { }
            }
            if (!arg.startsWith("--")) throw new IllegalArgumentException("unexpected argument '" + arg + "'");
            String name = arg;
            String value;
            int eq = arg.indexOf('=');
            if (eq > 0) {
                name = arg.substring(0, eq);
                value = arg.substring(eq + 1);
            } else {
                if (i + 1 >= args.length) throw new IllegalArgumentException(arg + " needs a value");
                value = args[++i];
            }
            switch (name) {
                case "--endpoint" -> endpoint = value;
                case "--params" -> params.add(value);
                case "--mutable-params" -> mutable.add(value);
                case "--addons-endpoint", "--node-endpoint", "--staging-dir", "--target-dir", "--volume-size", "--secrets", "--access-type",
                     "--fs-type", "--focus", "--call-timeout", "--timeout", "--junit" -> options.add(new String[] {name, value});
                default -> throw new IllegalArgumentException("unknown option " + name);
            }
        }
        if (endpoint == null || endpoint.isBlank()) throw new IllegalArgumentException("no endpoint: pass --endpoint or set CSI_ENDPOINT");
        SanityConfig.Builder b = SanityConfig.builder(endpoint)
                .params(pairs(params, "--params"))
                .mutableParams(pairs(mutable, "--mutable-params"))
                .keepGoing(keepGoing);
        Path junit = null;
        for (String[] o : options) {
            String value = o[1];
            switch (o[0]) {
                case "--addons-endpoint" -> b.addonsEndpoint(value);
                case "--node-endpoint" -> b.nodeEndpoint(value);
                case "--staging-dir" -> b.stagingDir(Path.of(value));
                case "--target-dir" -> b.targetDir(Path.of(value));
                case "--volume-size" -> b.volumeSize(SanityConfig.parseSize(value));
                case "--secrets" -> b.secrets(SanityConfig.readSecrets(Path.of(value)));
                case "--access-type" -> b.accessType(switch (value.toLowerCase(Locale.ROOT)) {
                    case "mount" -> AccessType.MOUNT;
                    case "block" -> AccessType.BLOCK;
                    default -> throw new IllegalArgumentException("--access-type must be mount or block, not '" + value + "'");
                });
                case "--fs-type" -> b.fsType(value);
                case "--focus" -> b.focus(value);
                case "--call-timeout", "--timeout" -> b.callTimeout(SanityConfig.parseDuration(value));
                case "--junit" -> junit = Path.of(value);
                default -> throw new IllegalStateException(o[0]);
            }
        }
        return new Run(b.build(), junit);
    }

    /** {@code k=v} items; keys of parameters may hold '/' (unlike secret keys), so no charset check here. */
    private static Map<String, String> pairs(List<String> values, String flag) {
        var map = new LinkedHashMap<String, String>();
        for (String v : values) {
            int eq = v.indexOf('=');
            if (eq <= 0) throw new IllegalArgumentException(flag + " wants key=value, not '" + v + "'");
            map.put(v.substring(0, eq), v.substring(eq + 1));
        }
        return map;
    }
}
