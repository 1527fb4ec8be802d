package io.csi4j.driver.catalog;

import java.util.List;
import java.util.Objects;

/**
 * One forward step of the schema: its statements run in one transaction that also sets
 * {@code PRAGMA user_version} to {@code version}. Migrations are never edited once released, only appended.
 */
public record Migration(int version, List<String> statements) {
    public Migration {
        if (version < 1) throw new IllegalArgumentException("migration versions start at 1: " + version);
        statements = List.copyOf(statements);
        if (statements.isEmpty()) throw new IllegalArgumentException("migration " + version + " has no statements");
        statements.forEach(s -> Objects.requireNonNull(s, "statement"));
    }

    /** Checks that versions run 1, 2, 3... with no gap: a gap would be a lost migration. */
    static List<Migration> checkOrder(List<Migration> migrations) {
        for (int i = 0; i < migrations.size(); i++) {
            if (migrations.get(i).version() != i + 1) {
                throw new IllegalArgumentException("migration #" + i + " has version " + migrations.get(i).version()
                        + ", expected " + (i + 1));
            }
        }
        return List.copyOf(migrations);
    }
}
