package io.csi4j.sdk.paging;

import static io.csi4j.sdk.testing.Requests.create;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.proto.csi.ControllerGrpc;
import io.csi4j.proto.csi.ListVolumesRequest;
import io.csi4j.proto.csi.ListVolumesResponse;
import io.csi4j.sdk.CsiException;
import io.csi4j.sdk.testing.TestPlugin;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PageTokensTest {
    @TempDir
    Path dir;

    private final byte[] key = "0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
    private final PageTokens tokens = new PageTokens(key);

    private static void assertAborted(Runnable decode, String expectedPart) {
        var e = assertThrows(CsiException.class, decode::run);
        assertEquals(Status.Code.ABORTED, e.code());
        assertTrue(e.getMessage().contains(expectedPart), e.getMessage());
    }

    @Test
    void roundTripsAndSurvivesARestartWithThePersistedKey() {
        String fp = PageTokens.fingerprint("vol-1", "");
        for (long position : new long[] {0, 1, 99, Long.MAX_VALUE}) {
            String token = tokens.encode("snapshots", fp, position);
            assertTrue(token.length() <= 128 && token.matches("[A-Za-z0-9_-]+"), token);
            assertEquals(position, tokens.decode("snapshots", fp, token));
            assertEquals(position, new PageTokens(key.clone()).decode("snapshots", fp, token), "same key, new instance");
        }
        assertEquals(0, tokens.decode("snapshots", fp, ""), "an empty token is the start");
    }

    @Test
    void refusesTamperedForeignAndWrongKindTokensWithAborted() {
        String fp = PageTokens.fingerprint("vol-1");
        String token = tokens.encode("volumes", fp, 42);
        byte[] raw = Base64.getUrlDecoder().decode(token);
        for (int i = 0; i < raw.length; i++) {
            byte[] bent = raw.clone();
            bent[i] ^= 0x01;
            String tampered = Base64.getUrlEncoder().withoutPadding().encodeToString(bent);
            assertThrows(CsiException.class, () -> tokens.decode("volumes", fp, tampered), "byte " + i);
        }
        assertAborted(() -> tokens.decode("volumes", PageTokens.fingerprint("vol-2"), token), "different filter");
        assertAborted(() -> new PageTokens("another key, 16+ bytes".getBytes()).decode("volumes", fp, token), "another key");
        assertAborted(() -> tokens.decode("snapshots", fp, tokens.encode("volumes", fp, 3)), "issued for a volumes list");
        assertAborted(() -> tokens.decode("volumes", fp, "not base64 at all!"), "not a token");
        assertAborted(() -> tokens.decode("volumes", fp, "AAAA"), "not a token");
        assertAborted(() -> tokens.decode("volumes", fp, token + "AA"), "not a token");
        assertNotEquals(PageTokens.fingerprint("a", "bc"), PageTokens.fingerprint("ab", "c"));
        assertThrows(IllegalArgumentException.class, () -> new PageTokens(new byte[8]));
        assertThrows(IllegalArgumentException.class, () -> tokens.encode("volumes", fp, -1));
    }

    @Test
    void pagesThroughListVolumesOverTheSocket() throws Exception {
        try (TestPlugin plugin = TestPlugin.start(dir)) {
            var controller = ControllerGrpc.newBlockingStub(plugin.channel());
            for (int i = 0; i < 5; i++) controller.createVolume(create("page-" + i));
            List<String> seen = new ArrayList<>();
            String token = "";
            int pages = 0;
            do {
                ListVolumesResponse page = controller.listVolumes(ListVolumesRequest.newBuilder()
                        .setMaxEntries(2).setStartingToken(token).build());
                page.getEntriesList().forEach(e -> seen.add(e.getVolume().getVolumeId()));
                token = page.getNextToken();
                pages++;
            } while (!token.isEmpty());
            assertEquals(List.of("vol-1", "vol-2", "vol-3", "vol-4", "vol-5"), seen);
            assertEquals(3, pages);
            var e = assertThrows(StatusRuntimeException.class, () -> controller.listVolumes(
                    ListVolumesRequest.newBuilder().setStartingToken("Zm9yZ2Vk").build()));
            assertEquals(Status.Code.ABORTED, e.getStatus().getCode());
            assertTrue(e.getStatus().getDescription().startsWith("starting_token is not valid for this volumes list"));
        }
    }
}
