package io.csi4j.driver.id;

import static org.junit.jupiter.api.Assertions.*;

import io.csi4j.driver.id.ObjectId.Kind;
import java.util.HashSet;
import java.util.List;
import org.junit.jupiter.api.Test;

class ObjectIdTest {

    @Test
    void generatedIdsParseBackAndNameTheirNode() {
        ObjectId id = ObjectId.generate(Kind.VOLUME, "worker-1");
        assertTrue(id.toString().startsWith("vol-"));
        assertTrue(id.toString().endsWith("-worker-1"));
        assertEquals(id, ObjectId.parse(Kind.VOLUME, id.toString()).orElseThrow());
        assertTrue(id.ownedBy("worker-1"));
        assertFalse(id.ownedBy("worker-2"));
    }

    @Test
    void idsAreShortAndSafeAsFileNamesAndUrlSegments() {
        var seen = new HashSet<String>();
        for (String node : List.of("n", "worker-1.example.com", "Node_With Spaces/and/slashes", "x".repeat(300))) {
            for (Kind kind : Kind.values()) {
                String id = ObjectId.generate(kind, node).toString();
                assertTrue(id.length() <= 86, id);
                assertTrue(id.matches("[a-z0-9._-]+"), id);
                assertFalse(id.contains("/") || id.equals(".") || id.equals(".."), id);
                assertTrue(seen.add(id));
                assertTrue(ObjectId.parse(kind, id).isPresent(), id);
            }
        }
    }

    @Test
    void everyPositionOfTheRandomPartTakesEveryBase32Character() {
        // 5 bits per character from one draw of 80: a slip in the bit slicing would pin a position or a bit
        var seen = new java.util.ArrayList<java.util.Set<Character>>();
        for (int i = 0; i < 16; i++) seen.add(new HashSet<>());
        for (int n = 0; n < 5_000; n++) {
            String random = ObjectId.generate(Kind.VOLUME, "n").random();
            assertEquals(16, random.length());
            for (int i = 0; i < 16; i++) seen.get(i).add(random.charAt(i));
        }
        for (int i = 0; i < 16; i++) assertEquals(32, seen.get(i).size(), "position " + i + ": " + seen.get(i));
    }

    @Test
    void longOrOddNodeIdsAreHashedStably() {
        String odd = "Node_With Spaces";
        assertEquals(ObjectId.nodeTag(odd), ObjectId.nodeTag(odd));
        assertTrue(ObjectId.nodeTag(odd).matches("_[a-z2-7]{12}"));
        assertNotEquals(ObjectId.nodeTag(odd), ObjectId.nodeTag("Node_With Spaces2"));
        assertTrue(ObjectId.generate(Kind.SNAPSHOT, odd).ownedBy(odd));
    }

    @Test
    void hostileInputNeverParses() {
        String good = ObjectId.generate(Kind.VOLUME, "n1").toString();
        for (String bad : List.of("", "..", "../etc/passwd", "/abs", "vol-aaaaaaaaaaaaaaaa-..", "vol-aaaaaaaaaaaaaaaa-a/b",
                "vol-aaaaaaaaaaaaaaaa-n1\0", "vol-aaaaaaaaaaaaaaaa-n1/../../x", "vol-AAAAAAAAAAAAAAAA-n1",
                "vol-aaaaaaaaaaaaaaa-n1", "vol-aaaaaaaaaaaaaaaa-" + "a".repeat(200), "vol-aaaaaaaaaaaaaaaa-a..b",
                good + "/", " " + good, "snap-aaaaaaaaaaaaaaaa-n1")) {
            assertTrue(ObjectId.parse(Kind.VOLUME, bad).isEmpty(), "parsed: " + bad);
        }
        assertTrue(ObjectId.parse(Kind.VOLUME, null).isEmpty());
        assertTrue(ObjectId.parse(Kind.SNAPSHOT, good).isEmpty(), "kind must match");
    }

    @Test
    void clusterWideGroupSnapshotIdsAreHeldByEveryNodeAndAreNoOtherKind() {
        ObjectId id = ObjectId.clusterGroupSnapshot();
        assertTrue(id.toString().matches("gsnap-[a-z2-7]{16}-_cluster"), id.toString());
        assertEquals(id, ObjectId.parse(Kind.GROUP_SNAPSHOT, id.toString()).orElseThrow());
        assertTrue(id.clusterWide());
        assertTrue(id.ownedBy("node-a") && id.ownedBy("any other node"));
        assertFalse(ObjectId.generate(Kind.GROUP_SNAPSHOT, "node-a").clusterWide());
        String random = id.random();
        for (String prefix : List.of("vol", "snap", "vg")) {
            for (Kind kind : Kind.values()) {
                assertTrue(ObjectId.parse(kind, prefix + "-" + random + "-_cluster").isEmpty(), prefix + " as " + kind);
            }
        }
        assertNotEquals(ObjectId.CLUSTER_TAG, ObjectId.nodeTag("_cluster"), "no node id yields the cluster tag");
    }
}
