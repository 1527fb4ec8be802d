package io.csi4j.sdk.server;

import java.io.IOException;
import java.net.ConnectException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Objects;
import java.util.Set;

/**
 * The file of one UNIX socket endpoint, from claiming the path to removing it.
 *
 * <p>The socket must have its final mode before anyone can connect. We bind inside a fresh 0700 directory
 * next to the target (same filesystem), chmod the socket there, then hard-link it to the target path and drop
 * the staging directory. Nobody but the owner can reach the socket while it is staged, and {@code link(2)}
 * fails instead of replacing a file that appeared meanwhile. The alternative, {@code umask(2)} around the bind,
 * changes the mode of files every other thread creates in that window, since umask is per process. The
 * staging directory lives for a few milliseconds only.
 */
final class SocketFile {
    /** sun_path is 108 bytes on Linux, including the terminating NUL. */
    private static final int MAX_SOCKET_PATH_BYTES = 107;
    private static final SecureRandom RANDOM = new SecureRandom();

    private final Path target;
    private final Path stagingDir;
    private final Path staged;
    private Object fileKey;

    private SocketFile(Path target, Path stagingDir) {
        this.target = target;
        this.stagingDir = stagingDir;
        this.staged = stagingDir.resolve("s");
    }

    /**
     * Prepares to serve on {@code target}: creates its parent directory, removes a stale socket left by a dead
     * server, and refuses a live socket or anything that is not a socket.
     */
    static SocketFile claim(Path target) throws IOException {
        checkLength(target);
        Path parent = target.getParent();
        Files.createDirectories(parent);
        removeIfStale(target);
        Path stagingDir = parent.resolve(".csi4j-" + HexFormat.of().formatHex(randomBytes(4)));
        Files.createDirectory(stagingDir, PosixFilePermissions.asFileAttribute(Set.of(
                PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_EXECUTE)));
        SocketFile file = new SocketFile(target, stagingDir);
        if (file.staged.toString().getBytes(StandardCharsets.UTF_8).length > MAX_SOCKET_PATH_BYTES) {
            file.abandon();
            throw new IOException("socket path too long to stage next to it (sun_path limit is 107 bytes): " + target);
        }
        return file;
    }

    /** Where the server binds; only the owner can reach it until {@link #publish} links it to the target. */
    Path stagedPath() {
        return staged;
    }

    Path target() {
        return target;
    }

    /** Sets the mode on the bound socket, then makes it visible at the target path. */
    void publish(Set<PosixFilePermission> mode) throws IOException {
        Files.setPosixFilePermissions(staged, mode);
        try {
            Files.createLink(target, staged);
        } catch (FileAlreadyExistsException raced) {
            removeIfStale(target);
            Files.createLink(target, staged);
        }
        fileKey = Files.readAttributes(target, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).fileKey();
        abandon();
    }

    /** Removes the staging directory (after publishing, or when the bind failed). */
    void abandon() {
        try {
            Files.deleteIfExists(staged);
            Files.deleteIfExists(stagingDir);
        } catch (IOException ignored) {
            // best effort: an empty 0700 directory is harmless and the next start uses another name
        }
    }

    /** Removes the target, but only while it is still the socket we published (not a successor's). */
    void remove() {
        if (fileKey == null) return;
        try {
            Object current = Files.readAttributes(target, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).fileKey();
            if (Objects.equals(current, fileKey)) Files.delete(target);
        } catch (NoSuchFileException gone) {
            // already removed by someone else
        } catch (IOException e) {
            System.getLogger(SocketFile.class.getName()).log(System.Logger.Level.WARNING,
                    "could not remove socket " + target + ": " + e.getMessage());
        }
    }

    static boolean isSocket(Path path) throws IOException {
        int mode = (Integer) Files.getAttribute(path, "unix:mode", LinkOption.NOFOLLOW_LINKS);
        return (mode & 0170000) == 0140000;
    }

    private static void removeIfStale(Path target) throws IOException {
        if (!Files.exists(target, LinkOption.NOFOLLOW_LINKS)) return;
        if (!isSocket(target)) {
            throw new IOException(target + " exists and is not a socket; refusing to replace it");
        }
        if (isLive(target)) {
            throw new IOException("another server is listening on " + target + "; refusing to start");
        }
        Files.deleteIfExists(target);
    }

    private static boolean isLive(Path socket) throws IOException {
        try (SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            channel.connect(UnixDomainSocketAddress.of(socket));
            return true;
        } catch (ConnectException refused) {
            return false;
        }
    }

    private static void checkLength(Path target) throws IOException {
        if (target.toString().getBytes(StandardCharsets.UTF_8).length > MAX_SOCKET_PATH_BYTES) {
            throw new IOException("socket path longer than 107 bytes (sun_path limit): " + target);
        }
    }

    private static byte[] randomBytes(int n) {
        byte[] b = new byte[n];
        RANDOM.nextBytes(b);
        return b;
    }
}
