package io.csi4j.sdk.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SocketFileTest {
    @TempDir
    Path dir;

    private static final EnumSet<PosixFilePermission> RW_OWNER = EnumSet.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE);

    @Test
    void theSocketIsBoundUnreachableGetsItsModeAndOnlyThenAppearsAtItsPath() throws Exception {
        Path target = dir.resolve("csi.sock");
        SocketFile file = SocketFile.claim(target);
        Path staging = file.stagedPath().getParent();
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(staging)),
                "only the owner can reach the socket before its mode is set");
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(file.stagedPath()));
            assertFalse(Files.exists(target), "nothing at the target path while staged");
            file.publish(RW_OWNER);
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(target)));
            assertFalse(Files.exists(staging), "staging directory removed");
            try (SocketChannel client = SocketChannel.open(UnixDomainSocketAddress.of(target));
                 SocketChannel accepted = server.accept()) {
                assertTrue(client.isConnected() && accepted.isConnected(), "the published path reaches the bound socket");
            }
            file.remove();
            assertFalse(Files.exists(target));
        }
    }

    @Test
    void removeLeavesASuccessorsSocketAlone() throws Exception {
        Path target = dir.resolve("csi.sock");
        SocketFile file = SocketFile.claim(target);
        try (ServerSocketChannel ours = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            ours.bind(UnixDomainSocketAddress.of(file.stagedPath()));
            file.publish(RW_OWNER);
            Files.delete(target); // an operator or a new plugin instance replaced it
            try (ServerSocketChannel successor = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
                successor.bind(UnixDomainSocketAddress.of(target));
                file.remove();
                assertTrue(SocketFile.isSocket(target), "the successor's socket stays");
            }
        }
    }

    @Test
    void refusesSymlinksAndOverlongPaths() throws Exception {
        Path target = dir.resolve("csi.sock");
        Files.createSymbolicLink(target, dir.resolve("elsewhere.sock"));
        var e = assertThrows(IOException.class, () -> SocketFile.claim(target));
        assertTrue(e.getMessage().contains("is not a socket"), e.getMessage());
        var longPath = dir.resolve("d".repeat(100)).resolve("csi.sock");
        var tooLong = assertThrows(IOException.class, () -> SocketFile.claim(longPath));
        assertTrue(tooLong.getMessage().contains("107 bytes"), tooLong.getMessage());
    }
}
