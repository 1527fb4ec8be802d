package io.csi4j.sdk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import org.junit.jupiter.api.Test;

class StatusMappingTest {
    @Test
    void mapsExpectedFailuresToTheirCodeAndHidesEverythingElse() {
        Status s = StatusMapping.toStatus(CsiException.outOfRange("too big"));
        assertEquals(Status.Code.OUT_OF_RANGE, s.getCode());
        assertEquals("too big", s.getDescription());
        assertNull(s.getCause());
        Status grpc = StatusMapping.toStatus(Status.UNAVAILABLE.withDescription("busy").withCause(new RuntimeException()).asRuntimeException());
        assertEquals(Status.Code.UNAVAILABLE, grpc.getCode());
        assertNull(grpc.getCause());
        Status bug = StatusMapping.toStatus(new IllegalStateException("/etc/secret path"), "abcd1234");
        assertEquals(Status.Code.INTERNAL, bug.getCode());
        assertEquals("internal error in the plugin [ref abcd1234]; see the plugin log", bug.getDescription());
        assertEquals(Status.Code.INTERNAL, StatusMapping.toStatus(new CsiException(Status.Code.OK, "odd")).getCode());
        assertTrue(StatusMapping.isExpected(CsiException.aborted("x")));
        assertEquals(IllegalStateException.class, StatusMapping.hiddenFailure(Status.fromThrowable(new IllegalStateException())).getClass());
        assertNull(StatusMapping.hiddenFailure(Status.NOT_FOUND.withCause(new RuntimeException())));
    }

    @Test
    void oneLineFormatterEscapesLineBreaks() {
        var record = new java.util.logging.LogRecord(java.util.logging.Level.INFO, "line one\nINFO forged line");
        record.setLoggerName("io.csi4j.sdk.call");
        String out = new OneLineFormatter().format(record);
        assertEquals(1, out.lines().count(), out);
        assertTrue(out.contains("INFO  call: line one\\nINFO forged line"), out);
    }
}
