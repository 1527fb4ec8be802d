package io.csi4j.driver.catalog;

import java.nio.file.Path;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import org.sqlite.SQLiteConfig;
import java.io.IOException;

/**
 * The catalog's connections: one writer behind a lock (SQLite serializes writers anyway, and a
 * sqlite-jdbc connection must not be shared between threads) and a small pool of read-only connections.
 * In WAL mode readers see the last commit and never wait for the writer, nor it for them. A write
 * returns once its commit is on disk; the sync happens after the writer lock is released, shared by
 * every commit made meanwhile ({@link GroupCommit}).
 */
final class CatalogConnections implements AutoCloseable {
    static final int BUSY_TIMEOUT_MILLIS = 10_000;
    private static final long CLOSE_WAIT_MILLIS = 30_000;

    private final Path file;
    private final ReentrantLock writerLock = new ReentrantLock();
    private final CatalogConnection writer;
    private final List<CatalogConnection> readers;
    private final BlockingQueue<CatalogConnection> idleReaders;
    private final Session autocommit = new AutocommitSession();
    private final GroupCommit commits;
    private volatile boolean closed;

    CatalogConnections(Path file, CatalogConnection writer, int readerCount) throws SQLException {
        this.file = file;
        this.writer = writer;
        this.commits = new GroupCommit(realPath(file));
        this.readers = new ArrayList<>(readerCount);
        this.idleReaders = new ArrayBlockingQueue<>(readerCount);
        try {
            for (int i = 0; i < readerCount; i++) readers.add(openReader(file));
        } catch (SQLException e) {
            for (CatalogConnection reader : readers) closeQuietly(reader, e);
            throw e;
        }
        idleReaders.addAll(readers);
        try {
            commits.syncWithDirectory();  // what open wrote (creation, migrations) is on disk, and so is the WAL's name
        } catch (RuntimeException e) {
            for (CatalogConnection reader : readers) closeQuietly(reader, (CatalogException) null);
            throw e;
        }
    }

    private static Path realPath(Path file) throws SQLException {
        try {
            return file.toRealPath();  // SQLite keeps the WAL beside the real file
        } catch (IOException e) {
            throw new SQLException("cannot resolve " + file + ": " + e.getMessage(), e);
        }
    }

    static CatalogConnection openWriter(Path file) throws SQLException {
        SQLiteConfig config = new SQLiteConfig();
        config.setJournalMode(SQLiteConfig.JournalMode.WAL);
        // NORMAL: COMMIT does not sync; GroupCommit syncs the WAL before a write returns (see there)
        config.setSynchronous(SQLiteConfig.SynchronousMode.NORMAL);
        config.enforceForeignKeys(true);
        config.setBusyTimeout(BUSY_TIMEOUT_MILLIS);
        config.setGetGeneratedKeys(false);  // no 'SELECT last_insert_rowid()' after every INSERT
        return new CatalogConnection(config.createConnection(url(file)));
    }

    static CatalogConnection openReader(Path file) throws SQLException {
        SQLiteConfig config = new SQLiteConfig();
        config.setReadOnly(true);
        config.setBusyTimeout(BUSY_TIMEOUT_MILLIS);
        config.setGetGeneratedKeys(false);
        return new CatalogConnection(config.createConnection(url(file)));
    }

    private static String url(Path file) {
        return "jdbc:sqlite:" + file;
    }

    GroupCommit.Counts commitCounts() {
        return commits.counts();
    }

    /** Statements each in their own implicit transaction. */
    Session autocommit() {
        return autocommit;
    }

    /**
     * Runs {@code body} in one write transaction (BEGIN IMMEDIATE): committed if it returns, rolled back if
     * it throws anything, the throwable passed on unchanged.
     */
    <T> T inTransaction(Function<Session, T> body) {
        refuseNesting();
        long ticket;
        T result;
        writerLock.lock();
        try {
            ensureOpen();
            TransactionSession tx = new TransactionSession();
            sql(() -> writer.execute("BEGIN IMMEDIATE"));
            try {
                result = body.apply(tx);
            } catch (Throwable failure) {
                tx.active = false;
                rollback(failure);
                throw failure;
            }
            tx.active = false;
            try {
                writer.execute("COMMIT");
            } catch (SQLException e) {
                CatalogException failure = SqlErrors.translate(file, e);
                rollback(failure);
                throw failure;
            }
            ticket = commits.written();
        } finally {
            writerLock.unlock();
        }
        commits.awaitDurable(ticket);
        return result;
    }

    private void rollback(Throwable cause) {
        try {
            writer.execute("ROLLBACK");
        } catch (SQLException e) {
            // SQLite may already have rolled back (after an I/O error, say); what matters is the cause.
            cause.addSuppressed(e);
        }
    }

    private <T> T sql(Session.Work<T> work, CatalogConnection connection) {
        try {
            return work.run(connection);
        } catch (SQLException e) {
            throw SqlErrors.translate(file, e);
        }
    }

    private void sql(SqlAction action) {
        try {
            action.run();
        } catch (SQLException e) {
            throw SqlErrors.translate(file, e);
        }
    }

    @FunctionalInterface
    private interface SqlAction {
        void run() throws SQLException;
    }

    private void ensureOpen() {
        if (closed) throw new IllegalStateException("catalog " + file + " is closed");
    }

    private void refuseNesting() {
        if (writerLock.isHeldByCurrentThread()) {
            throw new IllegalStateException("this thread is inside Catalog.inTransaction: use the tables of "
                    + "the transaction it was handed, not the catalog's");
        }
    }

    private CatalogConnection borrowReader() {
        try {
            while (true) {
                ensureOpen();
                CatalogConnection reader = idleReaders.poll(100, TimeUnit.MILLISECONDS);
                if (reader != null) return reader;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CatalogException("interrupted while waiting for a catalog read connection", e);
        }
    }

    private final class AutocommitSession implements Session {
        @Override
        public <T> T read(Work<T> work) {
            refuseNesting();
            CatalogConnection reader = borrowReader();
            try {
                return sql(work, reader);
            } finally {
                idleReaders.add(reader);
            }
        }

        @Override
        public <T> T write(Work<T> work) {
            refuseNesting();
            T result;
            long ticket;
            writerLock.lock();
            try {
                ensureOpen();
                result = sql(work, writer);
                ticket = commits.written();
            } finally {
                writerLock.unlock();
            }
            commits.awaitDurable(ticket);
            return result;
        }
    }

    private final class TransactionSession implements Session {
        volatile boolean active = true;

        @Override
        public <T> T read(Work<T> work) {
            return write(work);  // on the writer: the transaction must see its own writes
        }

        @Override
        public <T> T write(Work<T> work) {
            if (!active || !writerLock.isHeldByCurrentThread()) {
                throw new IllegalStateException("transaction tables used outside their transaction body or thread");
            }
            return sql(work, writer);
        }
    }

    /** Waits for borrowed readers to come back, then closes everything. */
    @Override
    public void close() {
        if (closed) return;
        closed = true;
        CatalogException failure = null;
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CLOSE_WAIT_MILLIS);
        int returned = 0;
        try {
            while (returned < readers.size() && System.nanoTime() < deadline) {
                if (idleReaders.poll(10, TimeUnit.MILLISECONDS) != null) returned++;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (returned < readers.size()) {
            failure = new CatalogException("catalog " + file + ": " + (readers.size() - returned)
                    + " read connections still in use at close");
        }
        for (CatalogConnection reader : readers) failure = closeQuietly(reader, failure);
        writerLock.lock();
        try {
            failure = closeQuietly(writer, failure);  // the last connection out checkpoints the WAL
        } finally {
            writerLock.unlock();
        }
        if (failure != null) throw failure;
    }

    private CatalogException closeQuietly(CatalogConnection connection, CatalogException failure) {
        try {
            connection.close();
            return failure;
        } catch (SQLException e) {
            if (failure == null) return SqlErrors.translate(file, e);
            failure.addSuppressed(e);
            return failure;
        }
    }

    private static void closeQuietly(CatalogConnection connection, SQLException failure) {
        try {
            connection.close();
        } catch (SQLException e) {
            failure.addSuppressed(e);
        }
    }
}
