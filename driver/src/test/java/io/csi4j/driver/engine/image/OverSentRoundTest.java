package io.csi4j.driver.engine.image;

import static io.csi4j.driver.engine.image.InPlaceRoundTest.K64;
import static io.csi4j.driver.engine.image.InPlaceRoundTest.SIZE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.catalog.Catalog;
import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.engine.InPlaceApply;
import io.csi4j.driver.engine.Replica;
import io.csi4j.driver.engine.image.InPlaceRoundTest.Range;
import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.driver.mobility.Bandwidth;
import io.csi4j.driver.mobility.Copies;
import io.csi4j.driver.mobility.SourceNode;
import io.csi4j.driver.mobility.SourcePart;
import io.csi4j.driver.mobility.SourceQuery;
import io.csi4j.driver.mobility.VolumeImports;
import io.csi4j.driver.model.ContentSource;
import io.csi4j.driver.replication.ReplicaState;
import io.csi4j.driver.replication.ReplicaStates;
import io.csi4j.driver.replication.Rounds;
import io.csi4j.driver.snapshot.Snapshots;
import io.csi4j.driver.testing.LeakCheck;
import io.csi4j.driver.volume.AccessMode;
import io.csi4j.driver.volume.CapacityRange;
import io.csi4j.driver.volume.Capability;
import io.csi4j.driver.volume.NewVolume;
import io.csi4j.driver.volume.Volumes;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Random;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A primary that sends more than its header's {@code bytes_to_send} (docs/inplace-rounds.md 1.6): the secondary's round
 * fails FAILED as soon as the ranges received pass the count, before the range past it is written and before any
 * later part is read, naming the volume and the counts; the copy is untouched (its state's point, its image byte for
 * byte, one inode with its only replica), no journal and nothing in {@code .tmp} left. Both ways a round goes: in place
 * under a journal (the reservation is sized by the count) and built beside (a round above the journal limit). Real XFS
 * pool, catalog, replication states, {@code Rounds} and {@code VolumeImports}; only the peer is this test's.
 */
@ExtendWith(LeakCheck.class)
class OverSentRoundTest {
    private static final String NODE = "node-b";
    private static final ReplicatedVolumeId ID = ReplicatedVolumeId.generate(List.of("node-a", NODE));
    private static final String VOL = ID.toString();

    @Test
    void aRoundAppliedInPlaceRefusesTheRangePastItsHeader() throws Exception {
        Random random = new Random(5);
        List<Range> ranges = InPlaceRoundTest.roundOf(random, SIZE);
        long announced = InPlaceRoundTest.bytes(ranges);
        assertTrue(announced <= InPlaceApply.journalLimit(SIZE), "a round the journal takes");
        refused(random, ranges, announced, ".journal");
    }

    @Test
    void aRoundBuiltBesideRefusesTheRangePastItsHeader() throws Exception {
        Random random = new Random(6);
        // zeros over more than the journal limit: built beside, as any round larger than X
        long zeros = InPlaceApply.journalLimit(SIZE) + K64;
        List<Range> ranges = new ArrayList<>(List.of(Range.zero(0, zeros)));
        ranges.addAll(InPlaceRoundTest.dataOf(random, SIZE));
        refused(random, ranges, InPlaceRoundTest.bytes(ranges), ".img");
    }

    /**
     * The copy in steady state, then a round whose peer announces {@code announced} bytes and sends {@code ranges}, a
     * 64 KiB range more, then a range and a trailer that count them all (so only the header's count can refuse it).
     * {@code building}: the suffix of the file in {@code .tmp} the round receives into (which way it went).
     */
    private void refused(Random random, List<Range> ranges, long announced, String building) throws Exception {
        try (var fx = new XfsEngineFixture("over-sent"); Agent agent = new Agent(fx)) {
            Replica held = agent.secondaryHolding(random);
            byte[] before = Files.readAllBytes(fx.image(VOL));
            Object inode = Files.getAttribute(fx.image(VOL), "unix:ino");

            List<Range> sent = new ArrayList<>(ranges);
            byte[] extra = new byte[K64];
            random.nextBytes(extra);
            sent.add(Range.data(2 * K64, extra));                             // the range past the count
            sent.add(Range.data(5 * K64, extra));                             // never read: the round stopped before
            Peer peer = new Peer(fx, announced, sent, ranges.size(), building);
            String next = InPlaceRoundTest.point(VOL).snapshotId();

            var e = assertThrows(DomainException.class, () -> agent.rounds.pull(ID, peer.primary(next), 0));
            assertEquals(DomainException.Kind.FAILED, e.kind(), e.getMessage());
            assertTrue(e.getMessage().contains("replica of " + VOL), e.getMessage());
            assertTrue(e.getMessage().contains(announced + " bytes announced"), e.getMessage());
            assertTrue(e.getMessage().contains(announced + " bytes in " + ranges.size() + " ranges, then " + K64 + " more"), e.getMessage());
            assertTrue(peer.sawBuilding, "the round was receiving into a " + building + " in .tmp when the extra range came");
            assertEquals(ranges.size() + 2, peer.read, "header and ranges read up to the one past the count, no part after it");

            assertEquals(held.snapshotId(), agent.states.get(ID).orElseThrow().point(), "the state still names the point");
            assertArrayEquals(before, Files.readAllBytes(fx.image(VOL)), "the image is that point, byte for byte");
            assertEquals(inode, Files.getAttribute(fx.image(VOL), "unix:ino"), "the same image");
            InPlaceRoundTest.assertOnePoint(fx, VOL, held);                   // its only replica, no journal, .tmp empty
        }
    }

    /** A primary whose reader lies about its count; records what the secondary read and what .tmp held meanwhile. */
    private static final class Peer implements SourceNode {
        private final XfsEngineFixture fx;
        private final List<SourcePart> parts = new ArrayList<>();
        private final int pastCount;
        private final String building;
        int read;
        boolean sawBuilding;

        Peer(XfsEngineFixture fx, long announced, List<Range> ranges, int honest, String building) {
            this.fx = fx;
            this.building = building;
            this.pastCount = honest + 1;                                        // the index of the extra range's part
            parts.add(new SourcePart.Header(SIZE, VOL, "", announced));       // the base is set per read (the held point)
            long data = 0;
            for (Range r : ranges) {
                if (r.data() == null) {
                    parts.add(new SourcePart.Range(r.offset(), r.zeroLength(), null, true, crc(new byte[(int) r.zeroLength()])));
                } else {
                    parts.add(new SourcePart.Range(r.offset(), r.data().length, ByteBuffer.wrap(r.data()), false, crc(r.data())));
                    data += r.data().length;
                }
            }
            parts.add(new SourcePart.Trailer(ranges.size(), data));
        }

        Rounds.Primary primary(String point) {
            return new Rounds.Primary() {
                @Override public String cutPoint(String volumeId, String holder, String held, boolean mayKeepHeld) { return point; }
                @Override public SourceNode source() { return Peer.this; }
            };
        }

        @Override
        public String nodeId() {
            return "node-a";
        }

        @Override
        public Transfer read(SourceQuery query) {
            assertEquals(1, query.baseSnapshotIds().size(), "the copy offers the point it holds");
            var h = (SourcePart.Header) parts.getFirst();
            parts.set(0, new SourcePart.Header(h.sizeBytes(), h.sourceVolumeId(), query.baseSnapshotIds().getFirst(), h.bytesToSend()));
            return new Transfer() {
                @Override
                public SourcePart next() {
                    if (read == parts.size()) return null;
                    if (read == pastCount) sawBuilding = receiving();
                    return parts.get(read++);
                }

                @Override
                public void close() {
                }
            };
        }

        private boolean receiving() {
            try (var files = Files.list(fx.engine.images().layout().tmpDir())) {
                return files.map(Path::getFileName).map(Path::toString).anyMatch(n -> n.startsWith(VOL + building + "."));
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }

        private static int crc(byte[] bytes) {
            CRC32C crc = new CRC32C();
            crc.update(bytes);
            return (int) crc.getValue();
        }
    }

    /** The secondary's agent over the pool: catalog, volumes, states, imports and rounds, as Driver.agentServices makes them. */
    private static final class Agent implements AutoCloseable {
        final Catalog catalog;
        final Volumes volumes;
        final ReplicaStates states;
        final Rounds rounds;

        Agent(XfsEngineFixture fx) throws Exception {
            Path dir = Files.createDirectories(fx.nodeDir.resolve("agent"));
            catalog = Catalog.openIn(dir);
            DriverConfig config = DriverConfig.defaults(dir, NODE);
            volumes = new Volumes(catalog, fx.engine, config, InstantSource.system());
            Snapshots snapshots = new Snapshots(catalog, fx.engine, volumes, config, InstantSource.system());
            states = new ReplicaStates(dir.resolve(ReplicaStates.DIRECTORY));
            var imports = new VolumeImports(volumes, fx.engine, Bandwidth.unlimited(), new Copies(), NODE);
            rounds = new Rounds(states, volumes, snapshots, imports, fx.engine, NODE);
        }

        /** A secondary after its full copy: holding a point whose replica is its image's inode (a round may go in place). */
        Replica secondaryHolding(Random random) {
            states.create(ID, new ReplicaState(1, ReplicaState.Role.SECONDARY, ""));
            volumes.creation().createReplica(new NewVolume("pvc-1", new CapacityRange(SIZE, 0),
                    List.of(Capability.mount(AccessMode.SINGLE_NODE_WRITER, "ext4")), Map.of(), Map.of(), ContentSource.NONE,
                    Optional.empty()), ID);
            Replica first = InPlaceRoundTest.point(VOL);
            byte[] full = new byte[(int) SIZE];
            random.nextBytes(full);
            volumes.changes().replaceImage(VOL, SIZE, null, first, OptionalLong.empty(), target -> target.write(ByteBuffer.wrap(full), 0));
            states.holding(ID, first.snapshotId());
            return first;
        }

        @Override
        public void close() {
            catalog.close();
        }
    }
}
