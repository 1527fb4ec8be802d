package io.csi4j.testkit.reference;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.stream.Stream;

/** The reference plugin's "storage": directories (mount volumes) and sparse files (block volumes). */
final class Data {
    private Data() {}

    static void createEmpty(Path data, boolean block, long size) {
        try {
            if (block) {
                try (RandomAccessFile file = new RandomAccessFile(data.toFile(), "rw")) {
                    file.setLength(size);
                }
            } else {
                Files.createDirectories(data);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static void grow(Path file, long size) {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            if (f.length() < size) f.setLength(size);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Copies a file or a directory tree (replacing what is at {@code to}). */
    static void copy(Path from, Path to) {
        try {
            if (Files.isRegularFile(from, LinkOption.NOFOLLOW_LINKS)) {
                Files.copy(from, to, StandardCopyOption.REPLACE_EXISTING);
                return;
            }
            if (Files.exists(to, LinkOption.NOFOLLOW_LINKS)) delete(to);
            Files.walkFileTree(from, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                    Files.createDirectories(to.resolve(from.relativize(dir)));
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    Files.copy(file, to.resolve(from.relativize(file)), StandardCopyOption.REPLACE_EXISTING);
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static void delete(Path path) {
        try {
            if (!Files.exists(path, LinkOption.NOFOLLOW_LINKS)) return;
            if (!Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS)) {
                Files.delete(path);
                return;
            }
            try (Stream<Path> walk = Files.walk(path)) {
                for (Path p : walk.sorted((a, b) -> b.getNameCount() - a.getNameCount()).toList()) {
                    p.toFile().setWritable(true);
                    Files.delete(p);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Bytes held: a block file's length, or the sum of a tree's file sizes. */
    static long used(Path path) {
        try {
            if (Files.isRegularFile(path)) return Files.size(path);
            try (Stream<Path> walk = Files.walk(path)) {
                return walk.filter(Files::isRegularFile).mapToLong(p -> p.toFile().length()).sum();
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
