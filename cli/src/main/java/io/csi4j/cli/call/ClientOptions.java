package io.csi4j.cli.call;

import io.csi4j.cli.output.Output;
import io.csi4j.cli.output.OutputFormat;
import io.csi4j.sdk.server.Endpoint;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import io.csi4j.driver.storage.DataDir;

/** Where to call, how long to wait, how to print: shared by every command that calls a plugin. */
public final class ClientOptions {
    /** Where the CSI-Addons services are when only CSI_ENDPOINT is known: beside it, as {@code csi4j serve} does. */
    static final String ADDONS_ENV = "CSI_ADDONS_ENDPOINT";
    static final String ADDONS_SOCKET = DataDir.ADDONS_SOCKET;

    @Spec(Spec.Target.MIXEE)
    CommandSpec mixee;

    @Option(names = "--endpoint", paramLabel = "URL",
            description = "Plugin endpoint: unix:///path.sock, a path, or tcp://host:port. Default: $CSI_ENDPOINT "
                    + "(vg and addons: $CSI_ADDONS_ENDPOINT, else csi-addons.sock beside $CSI_ENDPOINT)")
    String endpoint;

    @Option(names = "--timeout", paramLabel = "DURATION", defaultValue = "30s", converter = DurationConverter.class,
            description = "Deadline of each call, e.g. 500ms, 30s, 2m (create-volume with a source calls again while a copy onto another node advances). Default: ${DEFAULT-VALUE}")
    Duration timeout;

    @Option(names = {"-o", "--output"}, paramLabel = "table|json|yaml", defaultValue = "table",
            description = "Output format: a readable table, or JSON / YAML with the proto field names. Default: ${DEFAULT-VALUE}")
    OutputFormat format;

    /** A session on the CSI endpoint. */
    public Session csi() {
        return Session.oneShot(csiEndpoint(), timeout);
    }

    /** A session on the CSI-Addons endpoint. */
    public Session addons() {
        return Session.oneShot(addonsEndpoint(System.getenv()), timeout);
    }

    public Endpoint csiEndpoint() {
        return Endpoint.resolve(Optional.ofNullable(endpoint), System.getenv());
    }

    Endpoint addonsEndpoint(Map<String, String> env) {
        if (endpoint != null && !endpoint.isBlank()) return Endpoint.parse(endpoint);
        String addons = env.get(ADDONS_ENV);
        if (addons != null && !addons.isBlank()) return Endpoint.parse(addons);
        String csi = env.get(Endpoint.CSI_ENDPOINT);
        if (csi != null && !csi.isBlank() && Endpoint.parse(csi) instanceof Endpoint.Unix(Path path) && path.getParent() != null) {
            return new Endpoint.Unix(path.resolveSibling(ADDONS_SOCKET));
        }
        throw new IllegalArgumentException("no CSI-Addons endpoint: pass --endpoint or set " + ADDONS_ENV
                + " (or " + Endpoint.CSI_ENDPOINT + ", whose directory holds " + ADDONS_SOCKET + ")");
    }

    public Duration timeout() {
        return timeout;
    }

    public Output output() {
        return new Output(format, out());
    }

    public PrintWriter out() {
        return mixee.commandLine().getOut();
    }

    public PrintWriter err() {
        return mixee.commandLine().getErr();
    }
}
