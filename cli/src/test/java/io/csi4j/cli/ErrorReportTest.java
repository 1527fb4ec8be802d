package io.csi4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.grpc.Status;
import org.junit.jupiter.api.Test;

/** How a gRPC status reads on the terminal: one line, the plugin's words, none of gRPC's debugging detail. */
class ErrorReportTest {
    @Test
    void transportDetailIsLeftOut() {
        String[][] table = {
                {"CallOptions deadline exceeded after 1.959160079s. Name resolution delay 0.000000100 seconds. "
                        + "[closed=[], open=[[connecting_and_lb_delay=1.9s, remote_addr=/127.0.0.1:7701]]]",
                        "CallOptions deadline exceeded after 1.959160079s"},
                {"deadline exceeded after 0.999s. [closed=[], open=[[buffered_nanos=1000, waiting_for_connection]]]",
                        "deadline exceeded after 0.999s"},
                {"node 'node-b' (127.0.0.1:7702) did not answer: connection refused", "node 'node-b' (127.0.0.1:7702) did not answer: connection refused"},
                {"volume vol-x is staged at /a, not at /b", "volume vol-x is staged at /a, not at /b"},
        };
        for (String[] row : table) {
            assertEquals("DEADLINE_EXCEEDED: " + row[1], ErrorReport.describe(Status.DEADLINE_EXCEEDED.withDescription(row[0])), row[0]);
        }
    }
}
