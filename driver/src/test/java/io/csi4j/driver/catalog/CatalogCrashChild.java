package io.csi4j.driver.catalog;

import io.csi4j.driver.model.State;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Run in a child JVM by {@link CrashSafetyTest}: writes to the catalog forever and prints one line per
 * commit, after the call returned, until it is SIGKILLed. Lines: {@code V id} volume inserted, {@code R id}
 * volume made READY, {@code D id} volume deleted, {@code G id} group snapshot with 3 members inserted. Each
 * is preceded by {@code ? id} before the call, so the one operation the kill interrupted is known: it may
 * or may not have committed.
 */
public final class CatalogCrashChild {
    private CatalogCrashChild() {}

    public static void main(String[] args) {
        Path file = Path.of(args[0]);
        String prefix = args[1];
        Random random = new Random();
        List<String> mine = new ArrayList<>();
        try (Catalog catalog = Catalog.open(file)) {
            System.out.println("OPEN");
            System.out.flush();
            for (long i = 0; ; i++) {
                String id = prefix + i;
                int dice = random.nextInt(10);
                if (dice == 0) {
                    announce(id);
                    catalog.inTransaction(tx -> {
                        tx.groupSnapshots().insert(Samples.groupSnapshot(id, List.of("a", "b", "c")));
                        for (String source : List.of("a", "b", "c")) {
                            tx.snapshots().insert(Samples.member(id + "-" + source, source, id));
                        }
                        return null;
                    });
                    report("G", id);
                } else if (dice == 1 && !mine.isEmpty()) {
                    String victim = mine.remove(random.nextInt(mine.size()));
                    announce(victim);
                    if (catalog.volumes().delete(victim)) report("D", victim);
                } else if (dice == 2 && !mine.isEmpty()) {
                    String target = mine.get(random.nextInt(mine.size()));
                    announce(target);
                    if (catalog.volumes().setState(target, State.CREATING, State.READY)) report("R", target);
                } else {
                    announce(id);
                    catalog.volumes().insert(Samples.volume(id));
                    mine.add(id);
                    report("V", id);
                }
            }
        }
    }

    private static void announce(String id) {
        System.out.println("? " + id);
        System.out.flush();
    }

    private static void report(String what, String id) {
        System.out.println(what + " " + id);
        System.out.flush();
    }
}
