package io.csi4j.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SanityConfigTest {

    @Test
    void defaults() {
        SanityConfig c = SanityConfig.builder("unix:///x.sock").build();
        assertEquals(SanityConfig.DEFAULT_VOLUME_SIZE, c.volumeSize());
        assertEquals(AccessType.MOUNT, c.accessType());
        assertEquals(Duration.ofSeconds(60), c.callTimeout());
        assertTrue(c.addonsEndpoint().isEmpty() && c.stagingDir().isEmpty() && c.focus().isEmpty());
        assertTrue(c.selects("anything at all"));
    }

    @Test
    void focusFindsInTheName() {
        SanityConfig c = SanityConfig.builder("x.sock").focus("CreateVolume/.*ALREADY").build();
        assertTrue(c.selects("Controller/CreateVolume/the same name with a different size fails with ALREADY_EXISTS"));
        assertFalse(c.selects("Controller/DeleteVolume/a volume that does not exist answers OK"));
        assertTrue(SanityConfig.builder("x.sock").focus("").build().focus().isEmpty());
    }

    @Test
    void rejectsNonsense() {
        assertThrows(IllegalArgumentException.class, () -> SanityConfig.builder(" ").build());
        assertThrows(IllegalArgumentException.class, () -> SanityConfig.builder("x").volumeSize(0).build());
        assertThrows(IllegalArgumentException.class, () -> SanityConfig.builder("x").idempotencyRepeats(0).build());
        assertThrows(IllegalArgumentException.class, () -> SanityConfig.builder("x").callTimeout(Duration.ZERO).build());
        assertThrows(IllegalArgumentException.class, () -> AccessType.parse("file"));
        assertEquals(AccessType.BLOCK, AccessType.parse(" Block "));
    }

    @Test
    void readsASecretsFile(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("secrets");
        Files.writeString(file, """
                # credentials for the sanity run
                username=admin
                password: "s3cr=t"
                
                token.v1 = 'abc'
                """);
        assertEquals(Map.of("username", "admin", "password", "s3cr=t", "token.v1", "abc"), SanityConfig.readSecrets(file));
    }

    @Test
    void neverPrintsSecretValues() {
        String text = SanityConfig.builder("x.sock").secrets(Map.of("password", "hunter2")).build().toString();
        assertTrue(text.contains("password") && !text.contains("hunter2"), text);
    }

    @Test
    void parsesSizes() {
        assertEquals(1L << 30, SanityConfig.parseSize("1Gi"));
        assertEquals(512L << 20, SanityConfig.parseSize("512Mi"));
        assertEquals(2_000_000_000L, SanityConfig.parseSize("2G"));
        assertEquals(4096, SanityConfig.parseSize("4096"));
        assertEquals(3L << 40, SanityConfig.parseSize(" 3TiB "));
        assertThrows(IllegalArgumentException.class, () -> SanityConfig.parseSize("1.5Gi"));
        assertThrows(IllegalArgumentException.class, () -> SanityConfig.parseSize("Gi"));
        assertThrows(ArithmeticException.class, () -> SanityConfig.parseSize("9999999999Ti"));
    }

    @Test
    void refusesKeysTheSpecForbids() {
        var e = assertThrows(IllegalArgumentException.class, () -> SanityConfig.parsePairs(List.of("a b=c"), "params"));
        assertTrue(e.getMessage().contains("line 1"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> SanityConfig.parsePairs(List.of("novalue"), "params"));
        assertEquals(Map.of("k", ""), SanityConfig.parsePairs(List.of("k="), "params"));
    }
}
