package io.csi4j.driver.catalog;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import io.csi4j.driver.storage.DataDir;

/**
 * The driver's crash-safe record of what exists: one SQLite file in WAL mode whose write-ahead log is synced
 * before a write returns (as synchronous=FULL would, but one sync serves all writers committing at the
 * same time, see {@link GroupCommit}), so a call that returned is on disk and neither a killed process nor
 * a power cut loses anything it was told had committed.
 *
 * <p>Each table method is one statement in its own transaction; {@link #inTransaction} groups several.
 * Safe for any number of (virtual) threads: writes are serialized on one connection, reads use a pool of
 * read-only connections and never wait for writes.
 */
public final class Catalog extends CatalogTables implements AutoCloseable {
    /** The catalog's file name inside the driver's data directory. */
    public static final String FILE_NAME = DataDir.CATALOG;
    static final int READERS = 4;

    private final Path file;
    private final InstantSource clock;
    private final CatalogConnections connections;
    private final int schemaVersion;

    private Catalog(Path file, InstantSource clock, CatalogConnections connections, int schemaVersion) {
        super(connections.autocommit(), clock);
        this.file = file;
        this.clock = clock;
        this.connections = connections;
        this.schemaVersion = schemaVersion;
    }

    /** Opens {@code <dataDir>/catalog.db}, creating it if absent. */
    public static Catalog openIn(Path dataDir) {
        return open(dataDir.resolve(FILE_NAME));
    }

    /**
     * Opens (creating if absent) the catalog file, checks it and brings its schema up to date.
     *
     * @throws CatalogDamagedException if the file is not a database or fails {@code PRAGMA quick_check}
     * @throws CatalogVersionException if a newer csi4j wrote it
     */
    public static Catalog open(Path file) {
        return open(file, InstantSource.system());
    }

    /** As {@link #open(Path)}, with the clock that stamps {@code updatedAt} on changes. */
    public static Catalog open(Path file, InstantSource clock) {
        return open(file, clock, Schema.MIGRATIONS, READERS);
    }

    static Catalog open(Path file, InstantSource clock, List<Migration> migrations, int readers) {
        Path path = file.toAbsolutePath();
        Path dir = path.getParent();
        if (dir == null || !Files.isDirectory(dir)) {
            throw new CatalogException("catalog directory " + dir + " does not exist");
        }
        if (Files.exists(path) && !Files.isRegularFile(path)) {
            throw new CatalogException("catalog " + path + " exists but is not a regular file");
        }
        boolean created = !Files.exists(path);
        CatalogConnection writer;
        try {
            writer = CatalogConnections.openWriter(path);
        } catch (SQLException e) {
            throw SqlErrors.translate(path, e);
        }
        try {
            checkJournalMode(writer, path);
            quickCheck(writer, path);
            int version = migrate(writer, path, Migration.checkOrder(migrations));
            if (created) syncDirectory(dir);  // the new file's directory entry must survive a power cut too
            return new Catalog(path, clock, new CatalogConnections(path, writer, readers), version);
        } catch (SQLException e) {
            RuntimeException failure = SqlErrors.translate(path, e);
            closeAfterFailure(writer, failure);
            throw failure;
        } catch (RuntimeException e) {
            closeAfterFailure(writer, e);
            throw e;
        }
    }

    public Path file() {
        return file;
    }

    /** The schema version of the open file: always {@link #latestSchemaVersion()} once open. */
    public int schemaVersion() {
        return schemaVersion;
    }

    public static int latestSchemaVersion() {
        return Schema.latestVersion(Schema.MIGRATIONS);
    }

    /**
     * Runs {@code body} as one atomic change: committed (durably) when it returns, rolled back when it
     * throws, the exception passed on. Use only the tables of the {@link CatalogTransaction} it is handed,
     * on the calling thread; return null when there is nothing to return. Transactions do not nest.
     */
    public <T> T inTransaction(Function<CatalogTransaction, T> body) {
        return connections.inTransaction(session -> body.apply(new CatalogTransaction(session, clock)));
    }

    /** A full {@code PRAGMA integrity_check} (slower than the quick check done at open): empty if sound. */
    public List<String> integrityCheck() {
        return connections.autocommit().read(c -> problems(c, "PRAGMA integrity_check"));
    }

    /** How many syncs of the write-ahead log made commits durable so far (a test counts them per call). */
    public long logSyncs() {
        return connections.commitCounts().syncs();
    }

    /** Commits written and synced so far (tests check that a returned write is durable, and that syncs are shared). */
    GroupCommit.Counts commitCounts() {
        return connections.commitCounts();
    }

    /** A pragma's value on the writer connection (pragmas like synchronous are per connection). */
    String writerPragma(String name) {
        return connections.autocommit().write(c -> Rows.one(c, "PRAGMA " + name, row -> row.getString(1)).orElse(null));
    }

    @Override
    public void close() {
        connections.close();
    }

    private static void checkJournalMode(CatalogConnection c, Path file) throws SQLException {
        String mode = Rows.one(c, "PRAGMA journal_mode", row -> row.getString(1)).orElse("?");
        if (!mode.equalsIgnoreCase("wal")) {
            throw new CatalogException("catalog " + file + " could not be put in WAL mode (got " + mode + ")");
        }
    }

    private static void quickCheck(CatalogConnection c, Path file) throws SQLException {
        List<String> problems = problems(c, "PRAGMA quick_check(5)");
        if (!problems.isEmpty()) throw new CatalogDamagedException(file, String.join("; ", problems), null);
    }

    private static List<String> problems(CatalogConnection c, String pragma) throws SQLException {
        List<String> lines = new ArrayList<>();
        try (Statement statement = c.jdbc().createStatement(); ResultSet row = statement.executeQuery(pragma)) {
            while (row.next()) lines.add(row.getString(1));
        }
        return lines.equals(List.of("ok")) ? List.of() : lines;
    }

    private static int migrate(CatalogConnection c, Path file, List<Migration> migrations) throws SQLException {
        int current = userVersion(c);
        int known = Schema.latestVersion(migrations);
        if (current > known) throw new CatalogVersionException(file, current, known);
        for (Migration migration : migrations) {
            if (migration.version() <= current) continue;
            c.execute("BEGIN IMMEDIATE");
            try {
                if (userVersion(c) < migration.version()) {  // another process may have got here first
                    for (String statement : migration.statements()) c.execute(statement);
                    c.execute("PRAGMA user_version = " + migration.version());
                    List<String> dangling = Rows.list(c, "PRAGMA foreign_key_check", row -> row.getString(1));
                    if (!dangling.isEmpty()) {
                        throw new CatalogException("foreign keys broken in tables " + dangling);
                    }
                }
                c.execute("COMMIT");
            } catch (SQLException | RuntimeException e) {
                try {
                    c.execute("ROLLBACK");
                } catch (SQLException rollback) {
                    e.addSuppressed(rollback);
                }
                throw new CatalogException("catalog " + file + ": migration to schema version " + migration.version()
                        + " failed and was rolled back: " + e.getMessage(), e);
            }
            current = migration.version();
        }
        return current;
    }

    private static int userVersion(CatalogConnection c) throws SQLException {
        try (Statement statement = c.jdbc().createStatement();
                ResultSet row = statement.executeQuery("PRAGMA user_version")) {
            row.next();
            return row.getInt(1);
        }
    }

    private static void syncDirectory(Path dir) {
        try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ)) {
            channel.force(true);
        } catch (IOException e) {
            throw new CatalogException("cannot sync catalog directory " + dir + ": " + e.getMessage(), e);
        }
    }

    private static void closeAfterFailure(CatalogConnection writer, RuntimeException failure) {
        try {
            writer.close();
        } catch (SQLException e) {
            failure.addSuppressed(e);
        }
    }
}
