package io.csi4j.driver.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.grpc.Status;
import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Which failed calls mean "the agent did not answer" (UNAVAILABLE naming it) and which are the agent's own answer. */
class AgentDidNotAnswerTest {

    record Row(Status status, boolean didNotAnswer) {}

    @Test
    void transportFailuresAreSilenceAndTheAgentsErrorsAreAnswers() {
        var rows = List.of(
                new Row(Status.UNAVAILABLE.withDescription("io exception"), true),
                new Row(Status.DEADLINE_EXCEEDED, true),
                // grpc-java: the connection died under the call (a SIGKILLed agent)
                new Row(Status.UNKNOWN.withDescription("channel closed").withCause(new ClosedChannelException()), true),
                new Row(Status.UNKNOWN.withCause(new RuntimeException("wrapped", new IOException("Connection reset by peer"))), true),
                // the agent's own errors carry no cause across the wire
                new Row(Status.UNKNOWN.withDescription("channel closed"), false),
                new Row(Status.UNKNOWN.withCause(new IllegalStateException("a bug")), false),
                new Row(Status.NOT_FOUND, false),
                new Row(Status.FAILED_PRECONDITION, false),
                new Row(Status.INTERNAL.withCause(new IOException("not a transport code")), false),
                new Row(Status.CANCELLED, false));
        for (Row row : rows) assertEquals(row.didNotAnswer(), Agent.didNotAnswer(row.status()), row.status().toString());
    }
}
