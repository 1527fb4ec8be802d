package io.csi4j.cli.bench;

import picocli.CommandLine.Command;

@Command(name = "bench", description = "todo")
public final class BenchCommand implements Runnable {
    public void run() {}
}
