package io.csi4j.testkit.reference;

import java.nio.file.Path;
import java.util.EnumSet;
import java.util.Set;

/**
 * The reference plugin as a process of its own: {@code ReferencePluginMain DIR [FLAW...]}. Where a flaw makes the
 * plugin exit, the process really dies ({@code Runtime.halt}): its sockets are closed by the kernel, as when a
 * driver panics. Prints {@code READY <endpoint>} once it serves.
 */
public final class ReferencePluginMain {
    private ReferencePluginMain() {}

    public static void main(String[] args) throws Exception {
        Set<Flaw> flaws = EnumSet.noneOf(Flaw.class);
        for (int i = 1; i < args.length; i++) flaws.add(Flaw.valueOf(args[i]));
        ReferencePlugin plugin = ReferencePlugin.start(Path.of(args[0]), Options.full().withoutAddons(), flaws);
        plugin.exitProcessOnCrash();
        System.out.println("READY " + plugin.endpoint());
        System.out.flush();
        Thread.currentThread().join(); // serve until killed
    }
}
