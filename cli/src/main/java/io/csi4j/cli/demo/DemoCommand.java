package io.csi4j.cli.demo;

import picocli.CommandLine.Command;

@Command(name = "demo", description = "todo")
public final class DemoCommand implements Runnable {
    public void run() {}
}
