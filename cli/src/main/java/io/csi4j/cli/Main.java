package io.csi4j.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code csi4j} command. Each subcommand is a class of its own. */
@Command(name = "csi4j", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        description = "Container Storage Interface for the JVM: serve the local driver, call any CSI plugin, test it.",
        subcommands = {ServeCommand.class, SanityCommand.class, CommandLine.HelpCommand.class})
public final class Main {

    public static void main(String[] args) {
        System.exit(run(args));
    }

    public static int run(String... args) {
        return new CommandLine(new Main()).setCaseInsensitiveEnumValuesAllowed(true).execute(args);
    }

    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {"csi4j " + io.csi4j.driver.Driver.version()};
        }
    }
}
