package io.csi4j.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code csi4j} command. Each subcommand is a class of its own. */
@Command(name = "csi4j", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        description = "Container Storage Interface for the JVM: serve the local driver, call any CSI plugin, test it.",
        subcommands = {ServeCommand.class, SanityCommand.class, FsckCommand.class, CommandLine.HelpCommand.class})
public final class Main {

    public static void main(String[] args) {
        System.exit(run(args));
    }

    public static int run(String... args) {
        return new CommandLine(new Main()).setCaseInsensitiveEnumValuesAllowed(true)
                .setExecutionExceptionHandler(Main::refusal).execute(args);
    }

    /** A damaged or missing catalog is the operator's to fix: say what and how in one line, not a stack trace. */
    private static int refusal(Exception e, CommandLine command, CommandLine.ParseResult parsed) throws Exception {
        if (!(e instanceof io.csi4j.driver.catalog.CatalogException)) throw e;
        System.err.println("csi4j " + command.getCommandName() + ": " + e.getMessage());
        return 3;
    }

    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {"csi4j " + io.csi4j.driver.Driver.version()};
        }
    }
}
