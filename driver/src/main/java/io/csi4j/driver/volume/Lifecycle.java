package io.csi4j.driver.volume;

import java.util.function.Function;
import java.util.function.Supplier;

/**
 * intent → effect → commit (docs/design.md, "Crash protocol"), the part after the intent, written once for volumes,
 * snapshots and group snapshots. The caller has made the intent durable (a CREATING row); the effect makes the
 * artifact durably; the commit moves the row to READY. A failed effect is rolled back (artifact, then row) and
 * its failure is what the caller sees; a rollback that fails too leaves the CREATING row, which the reconciler
 * rolls back at the next start.
 */
public final class Lifecycle {
    private Lifecycle() {}

    public static <E, R> R effectThenCommit(Supplier<E> effect, Runnable rollBack, Function<E, R> commit) {
        E done;
        try {
            done = effect.get();                                                    // effect, durable
        } catch (RuntimeException e) {
            try {
                rollBack.run();
            } catch (RuntimeException cleanup) {
                // left CREATING: the reconciler rolls it back
            }
            throw e;
        }
        return commit.apply(done);                                                  // commit
    }
}
