package io.csi4j.driver.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The hand-written id check accepts exactly what the documented pattern (minus "..") accepts. */
class SafeIdTest {
    @Test
    void handWrittenCheckMatchesThePattern() {
        List<String> ids = new ArrayList<>(PathSafetyTest.HOSTILE.stream().filter(s -> s != null).toList());
        ids.addAll(List.of("vol-abc-n1", "a", "A.b_c-d", "a..b", "a.", "0", "x".repeat(128), "x".repeat(129), "-a", "_a", ".a"));
        String alphabet = "aZ09._-/ \0é.";
        SplittableRandom random = new SplittableRandom(42);
        for (int i = 0; i < 20_000; i++) {
            var b = new StringBuilder();
            int length = random.nextInt(0, 6);
            for (int j = 0; j < length; j++) b.append(alphabet.charAt(random.nextInt(alphabet.length())));
            ids.add(b.toString());
        }
        for (String id : ids) {
            boolean expected = PoolLayout.SAFE_ID.matcher(id).matches() && !id.contains("..");
            assertEquals(expected, PoolLayout.isSafeId(id), () -> "\"" + id + "\"");
        }
        assertEquals(false, PoolLayout.isSafeId(null));
    }
}
