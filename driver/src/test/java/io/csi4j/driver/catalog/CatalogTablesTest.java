package io.csi4j.driver.catalog;

import io.csi4j.driver.model.ContentSource;
import io.csi4j.driver.model.GroupSnapshotRecord;
import io.csi4j.driver.model.PublicationRecord;
import io.csi4j.driver.model.SnapshotRecord;
import io.csi4j.driver.model.State;
import io.csi4j.driver.model.VolumeGroupRecord;
import io.csi4j.driver.model.VolumeKind;
import io.csi4j.driver.model.VolumeRecord;

import static io.csi4j.driver.catalog.Samples.T0;
import static io.csi4j.driver.catalog.Samples.volume;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CatalogTablesTest {
    @TempDir
    Path dir;

    private final AtomicReference<Instant> now = new AtomicReference<>(Instant.parse("2025-06-01T00:00:00.000000001Z"));
    private Catalog catalog;

    @BeforeEach
    void open() {
        catalog = Catalog.open(dir.resolve(Catalog.FILE_NAME), now::get);
    }

    @AfterEach
    void close() {
        catalog.close();
    }

    /** Rows the hand-written codec stored before Gson read back the same (escapes, raw UTF-8, unpaired surrogates). */
    @Test
    void readsRowsTheEarlierCodecStored() throws Exception {
        catalog.volumes().insert(volume("v1"));
        String stored = "{\"\":\"empty key\",\"controls\":\"\\u0000\\u0001\\b\\f\\n\\r\\t\\u001f\\u007f end\","
                + "\"lone\":\"\\ud800 x \\udc00\",\"quote\\\"key\":\"a \\\"q\\\" C:\\\\dir\",\"unicode\":\"h\u00e9llo \u65e5\u672c \ud83d\ude80\"}";
        RawSqlite.execute(dir.resolve(Catalog.FILE_NAME), "UPDATE volumes SET parameters = '" + stored + "' WHERE id = 'v1'");
        assertEquals(Map.of("", "empty key", "controls", "\u0000\u0001\b\f\n\r\t\u001f\u007f end", "lone", "\ud800 x \udc00",
                        "quote\"key", "a \"q\" C:\\dir", "unicode", "h\u00e9llo \u65e5\u672c \ud83d\ude80"),
                catalog.volumes().byId("v1").orElseThrow().parameters());
    }

    @Test
    void volumeCrud() {
        VolumeTable volumes = catalog.volumes();
        VolumeRecord v = volume("v1");
        volumes.insert(v);
        assertEquals(Optional.of(v), volumes.byId("v1"));
        assertEquals(Optional.of(v), volumes.byName("pvc-v1"));
        assertEquals(Optional.empty(), volumes.byId("v2"));
        assertEquals(Optional.empty(), volumes.byName("pvc-v2"));

        assertTrue(volumes.setCapacity("v1", 5L << 30));
        assertFalse(volumes.setCapacity("nope", 1));
        assertTrue(volumes.setMutableParameters("v1", Map.of("iops", "500", "tier", "gold")));
        VolumeRecord changed = volumes.byId("v1").orElseThrow();
        assertEquals(5L << 30, changed.capacityBytes());
        assertEquals(Map.of("iops", "500", "tier", "gold"), changed.mutableParameters());
        assertEquals(T0, changed.createdAt());
        assertEquals(now.get(), changed.updatedAt());

        assertTrue(volumes.delete("v1"));
        assertFalse(volumes.delete("v1"));
        assertEquals(0, volumes.count());
    }

    @Test
    void everyContentSourceAndKindRoundTrips() {
        List<VolumeRecord> records = List.of(
                new VolumeRecord("a", "a", 0, VolumeKind.BLOCK, null, Map.of(), Map.of(), ContentSource.NONE, "n",
                        State.READY, T0, T0),
                new VolumeRecord("b", "b", 1, VolumeKind.FILESYSTEM, "xfs", Map.of(), Map.of(),
                        new ContentSource.FromSnapshot("snap-1"), "n", State.READY, T0, T0),
                new VolumeRecord("c", "c", Long.MAX_VALUE, VolumeKind.FILESYSTEM, null, Map.of("x", "y"), Map.of(),
                        new ContentSource.FromVolume("a"), "n", State.DELETING,
                        Instant.parse("1969-12-31T23:59:59.999999999Z"), Instant.parse("2262-04-11T23:47:16.854775807Z")));
        records.forEach(catalog.volumes()::insert);
        for (VolumeRecord r : records) assertEquals(r, catalog.volumes().byId(r.id()).orElseThrow());
    }

    @Test
    void awkwardTextSurvivesTheDatabase() {
        Map<String, String> awkward = Map.of(
                "quote\"and\\back", "\u0000nul \u001f\u007f \n\r\t",
                "lone", "\uD800 high, low \uDC00",
                "emoji 🚀", "日本語 \uD83D\uDE00");
        VolumeRecord v = new VolumeRecord("id ' \" ; --", "name\u0000with nul", 1, VolumeKind.BLOCK, null, awkward,
                awkward, ContentSource.NONE, "node", State.READY, T0, T0);
        catalog.volumes().insert(v);
        assertEquals(v, catalog.volumes().byId(v.id()).orElseThrow());
        assertEquals(v, catalog.volumes().byName("name\u0000with nul").orElseThrow());
        assertEquals(Optional.empty(), catalog.volumes().byName("name"));
    }

    @Test
    void namesAreUniquePerKind() {
        catalog.volumes().insert(volume("v1", "same", State.READY));
        DuplicateNameException e = assertThrows(DuplicateNameException.class,
                () -> catalog.volumes().insert(volume("v2", "same", State.CREATING)));
        assertEquals("v1", e.existingId());
        assertEquals("same", e.name());
        assertEquals(io.grpc.Status.Code.ALREADY_EXISTS, io.csi4j.driver.csi.StorageStatus.code(e.reason()));
        // a snapshot may share a volume's name: uniqueness is per object type
        catalog.snapshots().insert(new SnapshotRecord("s1", "same", "v1", 1, null, Map.of(), State.READY, T0, T0));
        // a repeated id is a bug elsewhere, not a name clash
        CatalogException idClash = assertThrows(CatalogException.class,
                () -> catalog.volumes().insert(volume("v1", "other", State.CREATING)));
        assertFalse(idClash instanceof DuplicateNameException);
        assertEquals(1, catalog.volumes().count());
    }

    @Test
    void stateChangesAreCompareAndSet() {
        VolumeTable volumes = catalog.volumes();
        volumes.insert(volume("v1"));
        now.set(Instant.parse("2025-06-02T00:00:00.5Z"));
        assertFalse(volumes.setState("v1", State.READY, State.DELETING), "row is CREATING, not READY");
        assertEquals(State.CREATING, volumes.byId("v1").orElseThrow().state());
        assertEquals(T0, volumes.byId("v1").orElseThrow().updatedAt(), "a failed CAS must not touch the row");
        assertTrue(volumes.setState("v1", State.CREATING, State.READY));
        assertFalse(volumes.setState("v1", State.CREATING, State.READY), "second identical CAS loses");
        VolumeRecord ready = volumes.byId("v1").orElseThrow();
        assertEquals(State.READY, ready.state());
        assertEquals(now.get(), ready.updatedAt());
        assertFalse(volumes.setState("ghost", State.CREATING, State.READY));
        assertThrows(IllegalArgumentException.class, () -> volumes.setState("v1", State.READY, State.CREATING));
        assertThrows(IllegalArgumentException.class, () -> volumes.setState("v1", State.READY, State.READY));
    }

    @Test
    void reconcilerQueriesFindIntermediateRows() {
        catalog.volumes().insert(volume("c1", "c1", State.CREATING));
        catalog.volumes().insert(volume("r1", "r1", State.READY));
        catalog.volumes().insert(volume("d1", "d1", State.DELETING));
        catalog.volumes().insert(volume("c2", "c2", State.CREATING));
        assertEquals(List.of("c1", "c2"), ids(catalog.volumes().inState(State.CREATING)));
        assertEquals(List.of("d1"), ids(catalog.volumes().inState(State.DELETING)));
        assertEquals(2, catalog.volumes().count(State.CREATING));
        assertEquals(1, catalog.volumes().count(State.READY));
        assertEquals(4, catalog.volumes().count());
    }

    @Test
    void snapshotsAndGroupSnapshots() {
        catalog.volumes().insert(volume("v1"));
        catalog.volumes().insert(volume("v2"));
        SnapshotRecord plain = Samples.snapshot("s0", "v1");
        catalog.snapshots().insert(plain);
        assertEquals(plain, catalog.snapshots().byName("snap-s0").orElseThrow());

        GroupSnapshotRecord group = Samples.groupSnapshot("g1", List.of("v1", "v2"));
        catalog.inTransaction(tx -> {
            tx.groupSnapshots().insert(group);
            tx.snapshots().insert(Samples.member("m1", "v1", "g1"));
            tx.snapshots().insert(Samples.member("m2", "v2", "g1"));
            return null;
        });
        assertEquals(group, catalog.groupSnapshots().byName("gs-g1").orElseThrow());
        assertEquals(List.of("m1", "m2"), ids(catalog.snapshots().ofGroup("g1")));
        assertEquals(List.of(), catalog.snapshots().ofGroup("g2"));

        assertThrows(ReferenceException.class, () -> catalog.snapshots().insert(Samples.member("m3", "v1", "nope")));
        ReferenceException stillUsed = assertThrows(ReferenceException.class,
                () -> catalog.groupSnapshots().delete("g1"));
        assertTrue(stillUsed.getMessage().contains("g1"), stillUsed.getMessage());

        catalog.inTransaction(tx -> {
            for (SnapshotRecord m : tx.snapshots().ofGroup("g1")) tx.snapshots().delete(m.id());
            return tx.groupSnapshots().delete("g1");
        });
        assertEquals(1, catalog.snapshots().count());
        assertEquals(0, catalog.groupSnapshots().count());
        assertThrows(IllegalArgumentException.class,
                () -> new SnapshotRecord("x", null, "v1", 1, null, Map.of(), State.READY, T0, T0));
    }

    @Test
    void volumeGroupMembership() {
        for (String id : List.of("v1", "v2", "v3")) catalog.volumes().insert(volume(id));
        catalog.volumeGroups().insert(Samples.volumeGroup("g1"));
        catalog.volumeGroups().insert(Samples.volumeGroup("g2"));
        VolumeGroupTable groups = catalog.volumeGroups();
        assertTrue(groups.addMember("g1", "v2"));
        assertTrue(groups.addMember("g1", "v1"));
        assertFalse(groups.addMember("g1", "v1"), "already a member");
        assertTrue(groups.addMember("g2", "v1"));
        assertEquals(List.of("v1", "v2"), groups.members("g1"));
        assertEquals(List.of("g1", "g2"), groups.groupsOf("v1"));
        assertEquals(List.of(), groups.groupsOf("v3"));
        assertThrows(ReferenceException.class, () -> groups.addMember("g1", "ghost"));
        assertThrows(ReferenceException.class, () -> groups.addMember("ghost", "v3"));

        assertTrue(groups.removeMember("g2", "v1"));
        assertFalse(groups.removeMember("g2", "v1"));
        assertTrue(catalog.volumes().delete("v2"));
        assertEquals(List.of("v1"), groups.members("g1"), "a deleted volume leaves its groups");
        assertTrue(groups.delete("g1"));
        assertEquals(List.of(), groups.groupsOf("v1"), "a deleted group takes its memberships along");
    }

    @Test
    void deletingAVolumeGroupMarksAllMembersAtomically() {
        for (String id : List.of("v1", "v2", "v3")) catalog.volumes().insert(volume(id, id, State.READY));
        catalog.volumeGroups().insert(Samples.volumeGroup("g1").withState(State.READY));
        catalog.volumeGroups().addMember("g1", "v1");
        catalog.volumeGroups().addMember("g1", "v2");
        catalog.volumes().setState("v2", State.READY, State.DELETING);  // someone got there first

        RuntimeException failure = assertThrows(IllegalStateException.class, () -> catalog.inTransaction(tx -> {
            tx.volumeGroups().setState("g1", State.READY, State.DELETING);
            for (String member : tx.volumeGroups().members("g1")) {
                if (!tx.volumes().setState(member, State.READY, State.DELETING)) {
                    throw new IllegalStateException("member " + member + " is busy");
                }
            }
            return null;
        }));
        assertEquals("member v2 is busy", failure.getMessage());
        assertEquals(State.READY, catalog.volumeGroups().byId("g1").orElseThrow().state(), "rolled back");
        assertEquals(State.READY, catalog.volumes().byId("v1").orElseThrow().state(), "rolled back");
    }

    @Test
    void publications() {
        catalog.volumes().insert(volume("v1"));
        PublicationTable publications = catalog.publications();
        assertTrue(publications.insert(Samples.publication("v1", "node-b")));
        assertTrue(publications.insert(Samples.publication("v1", "node-a")));
        PublicationRecord other = new PublicationRecord("v1", "node-a", true, "MULTI_NODE_READER_ONLY", Map.of(), T0);
        assertFalse(publications.insert(other), "(volume, node) already published");
        assertEquals(Samples.publication("v1", "node-a"), publications.get("v1", "node-a").orElseThrow());
        assertEquals(List.of("node-a", "node-b"),
                publications.ofVolume("v1").stream().map(PublicationRecord::nodeId).toList());
        assertEquals(1, publications.onNode("node-b").size());
        catalog.volumes().insert(volume("v2"));
        catalog.volumes().insert(volume("v3"));
        assertTrue(publications.insert(Samples.publication("v3", "node-c")));
        assertEquals(Map.of("v1", List.of("node-a", "node-b"), "v3", List.of("node-c")),
                publications.nodesOf(List.of("v3", "v2", "v1", "ghost")), "one query for a page of volumes");
        assertEquals(Map.of(), publications.nodesOf(List.of()));
        // more publications than volumes asked about: the by-id query instead of the whole table, same answer
        assertEquals(Map.of("v1", List.of("node-a", "node-b")), publications.nodesOf(List.of("v1", "v2")));
        assertEquals(Map.of("v3", List.of("node-c")), publications.nodesOf(List.of("v3")));
        assertTrue(publications.delete("v3", "node-c"));
        assertThrows(ReferenceException.class, () -> publications.insert(Samples.publication("ghost", "n")));
        assertThrows(ReferenceException.class, () -> catalog.volumes().delete("v1"), "published volume");
        assertTrue(publications.delete("v1", "node-a"));
        assertFalse(publications.delete("v1", "node-a"));
        assertEquals(1, publications.count());
    }

    @Test
    void transactionsCommitTogetherOrNotAtAll() {
        catalog.inTransaction(tx -> {
            tx.volumes().insert(volume("v1"));
            tx.volumes().insert(volume("v2"));
            assertEquals(2, tx.volumes().count(), "a transaction reads its own writes");
            return null;
        });
        assertEquals(2, catalog.volumes().count());

        IllegalStateException boom = new IllegalStateException("boom");
        IllegalStateException thrown = assertThrows(IllegalStateException.class, () -> catalog.inTransaction(tx -> {
            tx.volumes().insert(volume("v3"));
            tx.volumes().setState("v1", State.CREATING, State.READY);
            tx.volumes().delete("v2");
            throw boom;
        }));
        assertSame(boom, thrown);
        assertEquals(List.of("v1", "v2"), ids(catalog.volumes().page(0, 10).items()));
        assertEquals(State.CREATING, catalog.volumes().byId("v1").orElseThrow().state());

        // a failed statement inside a transaction can be handled without losing the rest
        String result = catalog.inTransaction(tx -> {
            tx.volumes().insert(volume("v4"));
            try {
                tx.volumes().insert(volume("v5", "pvc-v4", State.CREATING));
                return "inserted";
            } catch (DuplicateNameException e) {
                return e.existingId();
            }
        });
        assertEquals("v4", result);
        assertEquals(3, catalog.volumes().count());
    }

    @Test
    void transactionTablesStayInTheirTransaction() throws Exception {
        AtomicReference<CatalogTransaction> leaked = new AtomicReference<>();
        catalog.inTransaction(tx -> {
            leaked.set(tx);
            assertThrows(IllegalStateException.class, () -> catalog.volumes().count(), "catalog tables inside tx");
            assertThrows(IllegalStateException.class, () -> catalog.inTransaction(inner -> null), "nesting");
            AtomicReference<Throwable> fromOtherThread = new AtomicReference<>();
            Thread other = Thread.ofVirtual().start(() -> {
                try {
                    tx.volumes().count();
                } catch (Throwable t) {
                    fromOtherThread.set(t);
                }
            });
            try {
                other.join();
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            assertInstanceOf(IllegalStateException.class, fromOtherThread.get(), "tx tables on another thread");
            return null;
        });
        assertThrows(IllegalStateException.class, () -> leaked.get().volumes().insert(volume("late")));
        assertEquals(0, catalog.volumes().count());
    }

    @Test
    void recordsAreImmutableCopies() {
        Map<String, String> params = new HashMap<>(Map.of("a", "1"));
        VolumeRecord v = new VolumeRecord("v", "v", 1, VolumeKind.BLOCK, null, params, Map.of(), ContentSource.NONE,
                "n", State.READY, T0, T0);
        params.put("b", "2");
        assertEquals(Map.of("a", "1"), v.parameters());
        assertThrows(UnsupportedOperationException.class, () -> v.parameters().put("c", "3"));
        assertThrows(NullPointerException.class, () -> new VolumeRecord("v", null, 1, VolumeKind.BLOCK, null,
                Map.of(), Map.of(), ContentSource.NONE, "n", State.READY, T0, T0));
        assertNotEquals(v, v.withState(State.DELETING));
        assertInstanceOf(ContentSource.None.class, v.source());
    }

    static List<String> ids(List<?> records) {
        return records.stream().map(r -> switch (r) {
            case VolumeRecord v -> v.id();
            case SnapshotRecord s -> s.id();
            case GroupSnapshotRecord g -> g.id();
            case VolumeGroupRecord g -> g.id();
            default -> throw new IllegalArgumentException(r.toString());
        }).toList();
    }
}
