package io.csi4j.cli;

import io.csi4j.cli.bench.BenchCommand;
import io.csi4j.cli.call.AddonsCommand;
import io.csi4j.cli.call.CallCommand;
import io.csi4j.cli.call.ClusterCommand;
import io.csi4j.cli.call.ControllerCommand;
import io.csi4j.cli.call.GroupCommand;
import io.csi4j.cli.call.SnapshotCommand;
import io.csi4j.cli.call.IdentityCommand;
import io.csi4j.cli.call.NodeCommand;
import io.csi4j.cli.call.VolumeGroupCommand;
import io.csi4j.cli.certs.CertsCommand;
import io.csi4j.cli.demo.DemoCommand;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.ScopeType;

/**
 * The {@code csi4j} command. Each subcommand is a class of its own, listed in {@link #SUBCOMMANDS}; the root
 * registers them when a command line is built, not through its annotation, so that a command line names the one it
 * runs and picocli reads only that one's annotations.
 */
@Command(name = "csi4j", mixinStandardHelpOptions = true, scope = ScopeType.INHERIT, versionProvider = Main.Version.class,
        description = "Container Storage Interface for the JVM: serve the local driver, call any CSI plugin, test it, load it, demo it.")
public final class Main {

    public static void main(String[] args) {
        System.exit(run(args));
    }

    public static int run(String... args) {
        return run(System.out, System.err, args);
    }

    /** Runs one command line with its output and errors going to the given streams; returns the exit code. */
    public static int run(PrintStream out, PrintStream err, String... args) {
        return commandLine(out, err, args).execute(args);
    }

    /**
     * Every subcommand by the name it is typed as, in the order {@code --help} lists them. To add one: its class here
     * (the key is its {@code @Command} name; {@code MainTest} checks they agree).
     */
    static final Map<String, Class<?>> SUBCOMMANDS = subcommands(
            ServeCommand.class, "serve", IdentityCommand.class, "identity", ControllerCommand.class, "controller",
            NodeCommand.class, "node", GroupCommand.class, "group", SnapshotCommand.class, "snapshot",
            VolumeGroupCommand.class, "vg", AddonsCommand.class, "addons", ClusterCommand.class, "cluster",
            CallCommand.class, "call", SanityCommand.class, "sanity", FsckCommand.class, "fsck", TeardownCommand.class, "teardown",
            CertsCommand.class, "certs",
            BenchCommand.class, "bench", DemoCommand.class, "demo", CompletionCommand.class, "completion",
            CommandLine.HelpCommand.class, "help");

    /** Commands that walk the whole tree: they get every subcommand even when named first. */
    private static final Set<String> WHOLE_TREE = Set.of("completion", "help");

    public static CommandLine commandLine(PrintStream out, PrintStream err, String... args) {
        // picocli reads a subcommand's annotations (and its subcommands') when it is added: ~0.2-0.4 s with C1 for all
        // of them. A command line that starts with a subcommand's name needs that one only (help and completion list
        // them all; so do --help, --version, no arguments and a misspelt name, whose error suggests the close ones).
        var errors = new PrintWriter(err, true, StandardCharsets.UTF_8);
        var cl = new CommandLine(new Main(), new Factory(errors));
        String first = args.length > 0 ? args[0] : "";
        if (SUBCOMMANDS.containsKey(first) && !WHOLE_TREE.contains(first)) {
            cl.addSubcommand(first, SUBCOMMANDS.get(first));
        } else {
            SUBCOMMANDS.forEach(cl::addSubcommand);
        }
        cl.setCaseInsensitiveEnumValuesAllowed(true);
        cl.setOut(new PrintWriter(out, true, StandardCharsets.UTF_8));
        cl.setErr(errors);
        cl.setExecutionExceptionHandler(new ErrorReport());
        return cl;
    }

    private static Map<String, Class<?>> subcommands(Object... classAndName) {
        var map = new LinkedHashMap<String, Class<?>>();
        for (int i = 0; i < classAndName.length; i += 2) map.put((String) classAndName[i + 1], (Class<?>) classAndName[i]);
        return Collections.unmodifiableMap(map);
    }

    /** picocli's own factory, except that size options note a decimal unit on this command line's error stream. */
    private record Factory(PrintWriter errors) implements CommandLine.IFactory {
        @Override
        public <K> K create(Class<K> type) throws Exception {
            return type == ByteSize.class ? type.cast(new ByteSize(errors)) : CommandLine.defaultFactory().create(type);
        }
    }

    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            // qualified: this class is Main.Version
            return new String[] {"csi4j " + io.csi4j.driver.Version.current() + " (commit " + io.csi4j.driver.Version.commit() + ")"};
        }
    }
}
