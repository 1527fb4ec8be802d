package io.csi4j.cli;

import static org.junit.jupiter.api.Assertions.*;

import io.csi4j.cli.testing.Cli;
import org.junit.jupiter.api.Test;

class CompletionTest {
    @Test
    void printsABashScriptThatKnowsEveryCommand() {
        var r = Cli.exec("completion");
        assertEquals(0, r.exit(), r::toString);
        assertTrue(r.out().startsWith("#!/usr/bin/env bash"), r.out());
        assertTrue(r.out().contains("complete -F _complete_csi4j"), "no complete -F line");
        for (String word : new String[] {"create-volume", "list-snapshots", "stage", "create-snapshot", "allocated", "delta", "modify", "bench", "demo",
                "--secrets-file", "--scenario", "--paging", "--mutable-param"}) {
            assertTrue(r.out().contains(word), "completion lacks " + word);
        }
    }

    @Test
    void helpAndVersion() {
        var help = Cli.exec("--help");
        assertEquals(0, help.exit());
        for (String c : new String[] {"serve", "identity", "controller", "node", "group", "snapshot", "vg", "addons", "sanity", "fsck", "teardown", "bench", "demo", "completion"}) {
            assertTrue(help.out().contains("  " + c + " "), "help lacks " + c);
        }
        // the command list shows each command's first description line: a whole sentence, never one cut mid-way
        for (var sub : Main.commandLine(System.out, System.err).getSubcommands().values()) {
            String summary = sub.getCommandSpec().usageMessage().description()[0];
            assertTrue(summary.endsWith(".") || summary.endsWith(")"), sub.getCommandName() + ": '" + summary + "'");
        }
        assertTrue(help.out().contains("  call        Call any unary CSI or CSI-Addons RPC with a request written as\n"
                + "                protobuf JSON.\n"), help.out());
        assertTrue(help.out().contains("  demo        Walk the volume lifecycle against a plugin started just for it,\n"
                + "                checking each step.\n"), help.out());
        // picocli wraps at a dot too: file names stay whole when no line needs wrapping
        String certs = Cli.exec("certs", "--help").out();
        assertTrue(certs.contains("agent.pem + agent-key.pem") && certs.contains("controller.pem + controller-key.pem"), certs);
        var version = Cli.exec("--version");
        // the version the image is tagged with (the project's), and the commit it was built from
        assertTrue(version.out().matches("csi4j 0\\.1\\.0-SNAPSHOT \\(commit [0-9a-f]{12}(-dirty)?\\)\n"), version.out());
        var missing = Cli.exec("controller");
        assertEquals(2, missing.exit());
        assertTrue(missing.err().contains("Missing required subcommand"), missing.err());
    }
}
