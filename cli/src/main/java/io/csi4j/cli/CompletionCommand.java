package io.csi4j.cli;

import java.util.concurrent.Callable;
import picocli.AutoComplete;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code csi4j completion}: a bash (and zsh, via bashcompinit) completion script for every command and flag. */
@Command(name = "completion", description = {"Print a bash completion script.",
        "Use: source <(./csi4j completion)   or save it under /etc/bash_completion.d/csi4j"})
public final class CompletionCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        var root = spec.root().commandLine();
        spec.commandLine().getOut().print(AutoComplete.bash(root.getCommandName(), root));
        spec.commandLine().getOut().flush();
        return 0;
    }
}
