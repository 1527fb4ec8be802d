package io.csi4j.driver.catalog;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Durability of commits, shared between concurrent writers. The writer connection runs with
 * synchronous=NORMAL: a COMMIT appends its frames to the WAL with write(2) and returns (a kill -9
 * loses nothing the kernel has). Before a caller is told its change committed, {@link #awaitDurable}
 * fdatasyncs the WAL, which is exactly what synchronous=FULL does at every COMMIT, except that one
 * fdatasync covers every commit written before it started: callers that commit while a sync runs
 * share the next one (group commit) instead of queueing one sync each behind the writer lock.
 *
 * <p>Sound because in WAL mode a commit changes only the WAL (checkpoints sync the WAL before and
 * the database after copying, also with NORMAL), and because a commit's frames are written before
 * its ticket is handed out, so a sync that starts after reading ticket T covers every commit up to T.
 */
final class GroupCommit {
    private final Path wal;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition synced = lock.newCondition();
    private long written;   // tickets of commits whose frames are in the WAL
    private long durable;   // every commit up to this ticket is on disk
    private boolean syncing;
    private long syncs;

    /** How many commits were written, are known durable, and how many syncs that took. */
    record Counts(long written, long durable, long syncs) {}

    GroupCommit(Path databaseFile) {
        this.wal = databaseFile.resolveSibling(databaseFile.getFileName() + "-wal");
    }

    Counts counts() {
        lock.lock();
        try {
            return new Counts(written, durable, syncs);
        } finally {
            lock.unlock();
        }
    }

    /** Called by the writer right after a COMMIT returned, still holding the writer lock: the commit's ticket. */
    long written() {
        lock.lock();
        try {
            return ++written;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Returns once the commit with this ticket is on disk: joins a sync that starts after it, or runs
     * one itself (the leader), which then covers everyone who committed meanwhile.
     */
    void awaitDurable(long ticket) {
        lock.lock();
        try {
            while (durable < ticket) {
                if (syncing) {
                    synced.awaitUninterruptibly();
                    continue;
                }
                syncing = true;
                long target = written;
                lock.unlock();
                boolean ok = false;
                try {
                    sync();
                    ok = true;
                } finally {
                    lock.lock();
                    syncing = false;
                    if (ok) {
                        durable = Math.max(durable, target);
                        syncs++;
                    }
                    synced.signalAll();  // on failure, a waiter becomes the next leader and tries itself
                }
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Syncs the directory too: SQLite creates the WAL when the first connection opens and syncs its directory
     * entry only at its own first sync, which with NORMAL may come long after our first acknowledged commit.
     * Called once, when the catalog opens; the WAL then lives as long as the connections do.
     */
    void syncWithDirectory() {
        awaitDurable(written());
        try (FileChannel channel = FileChannel.open(wal.getParent(), StandardOpenOption.READ)) {
            channel.force(true);
        } catch (IOException e) {
            throw new CatalogException("cannot sync the catalog's directory " + wal.getParent() + ": " + e.getMessage(), e);
        }
    }

    /** The WAL is opened for each sync: if SQLite ever replaced the file, a kept descriptor would sync the old one. */
    private void sync() {
        try (FileChannel channel = FileChannel.open(wal, StandardOpenOption.READ)) {
            channel.force(false);  // fdatasync, as SQLite syncs its WAL
        } catch (IOException e) {
            throw new CatalogException("cannot sync the catalog's write-ahead log " + wal + ": " + e.getMessage(), e);
        }
    }
}
