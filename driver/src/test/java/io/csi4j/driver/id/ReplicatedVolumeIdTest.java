package io.csi4j.driver.id;

import static org.junit.jupiter.api.Assertions.*;

import io.csi4j.driver.id.ObjectId.Kind;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ReplicatedVolumeIdTest {

    @Test
    void generatedIdsNameEveryReplicaInOrderAndParseBack() {
        var id = ReplicatedVolumeId.generate(List.of("node-a", "node-b", "node-c"));
        assertTrue(id.toString().matches("vol-[a-z2-7]{16}-node-a__node-b__node-c"), id.toString());
        assertEquals(id, ReplicatedVolumeId.parse(id.toString()).orElseThrow());
        assertEquals(3, id.replicas());
        assertEquals(0, id.replicaIndex("node-a"));
        assertEquals(2, id.replicaIndex("node-c"));
        assertEquals(-1, id.replicaIndex("node-d"));
        assertFalse(id.heldBy("node"));
    }

    @Test
    void longOrOddNodeIdsAreHashedAndStillMatchedAndTheIdFitsTheCsiLimit() {
        String long1 = "a".repeat(63), long2 = "b".repeat(63), odd = "Node_With Spaces";
        for (var nodes : List.of(List.of(long1, long2, odd), List.of(long1, long2), List.of(odd, "n1"),
                List.of("x".repeat(300), "y".repeat(300), "z".repeat(300)), List.of(long1, "b".repeat(40), "c".repeat(40)))) {
            var id = ReplicatedVolumeId.generate(nodes);
            assertTrue(id.toString().length() <= 128, id.toString());
            assertTrue(id.toString().matches("[a-z0-9._-]+"), id.toString());
            assertEquals(id, ReplicatedVolumeId.parse(id.toString()).orElseThrow(), id.toString());
            for (int i = 0; i < nodes.size(); i++) assertEquals(i, id.replicaIndex(nodes.get(i)), id + " " + nodes.get(i));
        }
        var mixed = ReplicatedVolumeId.generate(List.of(long1, "b".repeat(40), "c".repeat(40)));
        assertTrue(mixed.tags().contains("b".repeat(40)), "only the longest are hashed: " + mixed);
        assertEquals(ObjectId.hashedTag(long1), mixed.tags().getFirst());
    }

    @Test
    void ordinaryIdsAndReplicatedIdsNeverParseAsEachOther() {
        String plain = ObjectId.generate(Kind.VOLUME, "node-a").toString();
        assertTrue(ReplicatedVolumeId.parse(plain).isEmpty());
        String replicated = ReplicatedVolumeId.generate(List.of("node-a", "node-b")).toString();
        assertTrue(ObjectId.parse(Kind.VOLUME, replicated).isEmpty());
        assertTrue(ReplicatedVolumeId.isReplicated(replicated));
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "", "vol-aaaaaaaaaaaaaaaa-node-a",                         // one replica is an ordinary id
            "vol-aaaaaaaaaaaaaaaa-a__b__c__d",                          // four
            "vol-aaaaaaaaaaaaaaaa-a__a",                                // one node twice
            "snap-aaaaaaaaaaaaaaaa-a__b",                               // not a volume
            "vol-aaaaaaaaaaaaaaa-a__b",                                 // 15 random
            "vol-aaaaaaaaaaaaaaa1-a__b",                                // not base32
            "vol-aaaaaaaaaaaaaaaa-a___b", "vol-aaaaaaaaaaaaaaaa-a__", "vol-aaaaaaaaaaaaaaaa-__b",
            "vol-aaaaaaaaaaaaaaaa-a__-b", "vol-aaaaaaaaaaaaaaaa-A__b", "vol-aaaaaaaaaaaaaaaa-a__b/../c",
            "vol-aaaaaaaaaaaaaaaa-a__b\n", "vol-aaaaaaaaaaaaaaaa-a__b__", "vol-aaaaaaaaaaaaaaaa-_abc__b",
            "vol-aaaaaaaaaaaaaaaa-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa__bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
    })
    void hostileOrMalformedIdsDoNotParse(String text) {
        assertTrue(ReplicatedVolumeId.parse(text).isEmpty(), text);
    }

    @Test
    void aHashedTagBesideAPlainOneSplitsUnambiguously() {
        String hashed = ObjectId.hashedTag("Odd Node");
        var id = ReplicatedVolumeId.parse("vol-aaaaaaaaaaaaaaaa-a__" + hashed).orElseThrow();
        assertEquals(List.of("a", hashed), id.tags());
        assertEquals(1, id.replicaIndex("Odd Node"));
    }

    @Test
    void generateRefusesRepeatedNodesAndWrongCounts() {
        assertThrows(IllegalArgumentException.class, () -> ReplicatedVolumeId.generate(List.of("a", "a")));
        assertThrows(IllegalArgumentException.class, () -> ReplicatedVolumeId.generate(List.of("a")));
        assertThrows(IllegalArgumentException.class, () -> ReplicatedVolumeId.generate(List.of("a", "b", "c", "d")));
    }
}
