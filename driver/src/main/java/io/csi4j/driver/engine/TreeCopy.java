package io.csi4j.driver.engine;

import io.csi4j.driver.os.Durable;
import io.csi4j.driver.os.Errno;
import io.csi4j.driver.os.FileStat;
import io.csi4j.driver.os.OsException;
import io.csi4j.driver.os.Reflink;
import io.csi4j.driver.os.SparseCopy;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;

/**
 * Copies a directory tree: each regular file by reflink where the filesystem can (else a
 * sparse-aware copy), symlinks as symlinks (never followed), directories with their owner, mode
 * and times. Stays on the source's filesystem: a mount inside the tree is not copied. Hard links
 * become separate files; fifos, sockets and device nodes are skipped; extended attributes are not
 * copied.
 */
final class TreeCopy {
    private TreeCopy() {}

    /** What was copied how. */
    record Result(long files, long reflinked, long directories, long symlinks, long skipped) {}

    static Result copy(Path source, Path target, boolean tryReflink) {
        FileStat root = FileStat.of(source);
        long[] counts = new long[5];
        try {
            Files.walkFileTree(source, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                    FileStat stat = FileStat.of(dir);
                    if (stat.deviceMajor() != root.deviceMajor() || stat.deviceMinor() != root.deviceMinor()) {
                        counts[4]++;
                        return FileVisitResult.SKIP_SUBTREE;
                    }
                    Path to = target.resolve(source.relativize(dir).toString());
                    if (!dir.equals(source) || Files.notExists(to, LinkOption.NOFOLLOW_LINKS)) Files.createDirectory(to);
                    counts[2]++;
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    Path to = target.resolve(source.relativize(file).toString());
                    if (attrs.isSymbolicLink()) {
                        Files.createSymbolicLink(to, Files.readSymbolicLink(file));
                        copyOwner(file, to);
                        counts[3]++;
                    } else if (attrs.isRegularFile()) {
                        if (tryReflink && reflink(file, to)) counts[1]++; else SparseCopy.copy(file, to);
                        copyMetadata(file, to);
                        Durable.fsync(to); // the tree is renamed into place as a whole: its content must be on disk first
                        counts[0]++;
                    } else {
                        counts[4]++;
                    }
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path dir, IOException e) throws IOException {
                    if (e != null) throw e;
                    Path to = target.resolve(source.relativize(dir).toString());
                    copyMetadata(dir, to);
                    Durable.fsyncDirectory(to);
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException("copying " + source + " to " + target, e);
        }
        return new Result(counts[0], counts[1], counts[2], counts[3], counts[4]);
    }

    private static boolean reflink(Path from, Path to) {
        try {
            Reflink.clone(from, to);
            return true;
        } catch (OsException e) {
            if (e.is(Errno.EOPNOTSUPP) || e.is(Errno.EXDEV) || e.is(Errno.EINVAL) || e.is(Errno.ENOTTY)) return false;
            throw e;
        }
    }

    private static void copyOwner(Path from, Path to) throws IOException {
        Files.setAttribute(to, "unix:uid", Files.getAttribute(from, "unix:uid", LinkOption.NOFOLLOW_LINKS), LinkOption.NOFOLLOW_LINKS);
        Files.setAttribute(to, "unix:gid", Files.getAttribute(from, "unix:gid", LinkOption.NOFOLLOW_LINKS), LinkOption.NOFOLLOW_LINKS);
    }

    /** Owner first: chown clears setuid and setgid bits, so the mode goes on after it. */
    private static void copyMetadata(Path from, Path to) throws IOException {
        copyOwner(from, to);
        int mode = (Integer) Files.getAttribute(from, "unix:mode", LinkOption.NOFOLLOW_LINKS);
        Files.setAttribute(to, "unix:mode", mode & 07777, LinkOption.NOFOLLOW_LINKS);
        FileTime modified = Files.getLastModifiedTime(from, LinkOption.NOFOLLOW_LINKS);
        Files.setLastModifiedTime(to, modified);
    }
}
