package io.csi4j.cli;

import static org.junit.jupiter.api.Assertions.*;

import io.csi4j.cli.testing.Cli;
import java.io.PrintStream;
import java.io.OutputStream;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine.Command;

/** The root registers subcommands from {@link Main#SUBCOMMANDS}: the one a command line names, or all of them. */
class MainTest {
    private static final PrintStream SINK = new PrintStream(OutputStream.nullOutputStream());

    @Test
    void eachKeyIsTheNameItsClassIsTypedAs() {
        Main.SUBCOMMANDS.forEach((name, type) -> assertEquals(name, type.getAnnotation(Command.class).name(), type.getName()));
    }

    @Test
    void aCommandLineThatNamesASubcommandBuildsThatOneOnly() {
        var cl = Main.commandLine(SINK, SINK, "identity", "info");
        assertEquals(List.of("identity"), List.copyOf(cl.getSubcommands().keySet()));
        // its own subcommands and the root's inherited -h/-V are there as before
        assertTrue(cl.getSubcommands().get("identity").getSubcommands().containsKey("info"));
        assertNotNull(cl.getSubcommands().get("identity").getSubcommands().get("info").getCommandSpec().findOption("--version"));
    }

    @Test
    void helpCompletionNoArgumentsAndTyposGetTheWholeTree() {
        for (String[] args : new String[][] {{}, {"--help"}, {"help"}, {"completion"}, {"identty"}, {"--version"}}) {
            var cl = Main.commandLine(SINK, SINK, args);
            assertEquals(List.copyOf(Main.SUBCOMMANDS.keySet()), List.copyOf(cl.getSubcommands().keySet()), String.join(" ", args));
        }
    }

    @Test
    void aSubcommandsHelpAndAMisspeltOneReadAsBefore() {
        var help = Cli.exec("identity", "info", "--help");
        assertEquals(0, help.exit(), help::toString);
        assertTrue(help.out().startsWith("Usage: csi4j identity info [-hV]"), help.out());
        var typo = Cli.exec("identty", "info");
        assertEquals(2, typo.exit(), typo::toString);
        assertTrue(typo.err().contains("Did you mean: csi4j identity"), typo.err());
    }
}
