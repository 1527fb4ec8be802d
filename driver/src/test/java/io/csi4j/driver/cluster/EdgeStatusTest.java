package io.csi4j.driver.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.csi4j.driver.addons.AddonsStatus;
import io.csi4j.driver.csi.StorageStatus;
import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.storage.StorageException;
import io.csi4j.proto.cluster.PeerAgent;
import io.csi4j.sdk.CsiException;
import io.grpc.Status;
import io.grpc.Status.Code;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The three edges' mappers, as tables: the code each domain kind gets on csi.v1, on CSI-Addons and on the agents'
 * NodeAgent (the same codes the domain threw before it had kinds), the message kept as it is, anything else left
 * alone; and how a copy's source node's failure is told by the node that needed it.
 */
class EdgeStatusTest {
    private static final Map<DomainException.Kind, Code> KINDS = Map.of(
            DomainException.Kind.NOT_FOUND, Code.NOT_FOUND,
            DomainException.Kind.EXISTS, Code.ALREADY_EXISTS,
            DomainException.Kind.INVALID, Code.INVALID_ARGUMENT,
            DomainException.Kind.OUT_OF_RANGE, Code.OUT_OF_RANGE,
            DomainException.Kind.EXHAUSTED, Code.RESOURCE_EXHAUSTED,
            DomainException.Kind.PRECONDITION, Code.FAILED_PRECONDITION,
            DomainException.Kind.ABORTED, Code.ABORTED,
            DomainException.Kind.UNAVAILABLE, Code.UNAVAILABLE,
            DomainException.Kind.FAILED, Code.INTERNAL);

    record Edge(String name, UnaryOperator<RuntimeException> map) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Edge> edges() {
        return Stream.of(new Edge("csi", StorageStatus::toCsi), new Edge("addons", AddonsStatus::toStatus),
                new Edge("cluster", AgentStatus::toStatus));
    }

    @Test
    void everyKindHasItsRow() {
        assertEquals(DomainException.Kind.values().length, KINDS.size());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("edges")
    void eachKindGetsItsCodeAndKeepsItsMessage(Edge edge) {
        for (DomainException.Kind kind : DomainException.Kind.values()) {
            var answer = (CsiException) edge.map().apply(new DomainException(kind, "volume v-1 says " + kind));
            assertEquals(KINDS.get(kind), answer.code(), edge + " " + kind);
            assertEquals("volume v-1 says " + kind, answer.getMessage(), edge + " " + kind);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("edges")
    void storageReasonsGetTheirCodeAndOthersPassAsTheyAre(Edge edge) {
        for (StorageException.Reason reason : StorageException.Reason.values()) {
            var answer = (CsiException) edge.map().apply(new StorageException(reason, "image i-1: " + reason));
            assertEquals(StorageStatus.code(reason), answer.code(), edge + " " + reason);
            assertEquals("image i-1: " + reason, answer.getMessage());
        }
        var bug = new IllegalStateException("a bug");
        assertSame(bug, edge.map().apply(bug));
        var answered = CsiException.notFound("already an answer");
        assertSame(answered, edge.map().apply(answered));
    }

    record Peer(Code code, String description, Code answered, String message) {}

    static Stream<Peer> peers() {
        return Stream.of(
                new Peer(Code.UNAVAILABLE, "connection refused", Code.UNAVAILABLE,
                        "node 'n2' (10.0.0.2:7070), which holds the content source, did not answer: UNAVAILABLE: connection refused"),
                new Peer(Code.DEADLINE_EXCEEDED, null, Code.UNAVAILABLE,
                        "node 'n2' (10.0.0.2:7070), which holds the content source, did not answer: DEADLINE_EXCEEDED"),
                new Peer(Code.CANCELLED, "gone", Code.UNAVAILABLE,
                        "node 'n2' (10.0.0.2:7070), which holds the content source, did not answer: CANCELLED: gone"),
                new Peer(Code.NOT_FOUND, "source snapshot s-1 does not exist on this node", Code.NOT_FOUND,
                        "node 'n2': source snapshot s-1 does not exist on this node"),
                new Peer(Code.FAILED_PRECONDITION, "the dir engine cannot send volumes to another node", Code.FAILED_PRECONDITION,
                        "node 'n2': the dir engine cannot send volumes to another node"),
                new Peer(Code.INTERNAL, null, Code.INTERNAL, "node 'n2': INTERNAL"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("peers")
    void aSourceNodesFailureIsToldByTheNodeThatNeededIt(Peer peer) {
        var source = PeerAgent.newBuilder().setNodeId("n2").setAddress("10.0.0.2:7070").build();
        var status = Status.fromCode(peer.code()).withDescription(peer.description());
        CsiException answer = AgentStatus.fromSource(status.asRuntimeException(), source);
        assertEquals(peer.answered(), answer.code());
        assertEquals(peer.message(), answer.getMessage());
    }
}
