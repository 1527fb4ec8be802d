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
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.ScopeType;

/** The {@code csi4j} command. Each subcommand is a class of its own. */
@Command(name = "csi4j", mixinStandardHelpOptions = true, scope = ScopeType.INHERIT, versionProvider = Main.Version.class,
        description = "Container Storage Interface for the JVM: serve the local driver, call any CSI plugin, test it, load it, demo it.",
        subcommands = {ServeCommand.class, IdentityCommand.class, ControllerCommand.class, NodeCommand.class, GroupCommand.class, SnapshotCommand.class,
                VolumeGroupCommand.class, AddonsCommand.class, ClusterCommand.class, CallCommand.class, SanityCommand.class, FsckCommand.class, TeardownCommand.class, CertsCommand.class, BenchCommand.class, DemoCommand.class,
                CompletionCommand.class, CommandLine.HelpCommand.class})
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

    public static CommandLine commandLine(PrintStream out, PrintStream err, String... args) {
        // picocli reads every subcommand's annotations when it builds the tree (~200 ms with C1): a plugin's
        // start-up should not pay for the client commands it never runs
        var errors = new PrintWriter(err, true, StandardCharsets.UTF_8);
        var cl = new CommandLine(args.length > 0 && args[0].equals("serve") ? new ServeOnly() : new Main(), new Factory(errors));
        cl.setCaseInsensitiveEnumValuesAllowed(true);
        cl.setOut(new PrintWriter(out, true, StandardCharsets.UTF_8));
        cl.setErr(errors);
        cl.setExecutionExceptionHandler(new ErrorReport());
        return cl;
    }

    /** The same root with only {@code serve} under it: same names, options and help for the plugin's command line. */
    @Command(name = "csi4j", mixinStandardHelpOptions = true, scope = ScopeType.INHERIT, versionProvider = Main.Version.class,
            subcommands = {ServeCommand.class})
    static final class ServeOnly {}

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
