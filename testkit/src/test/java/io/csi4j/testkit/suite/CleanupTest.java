package io.csi4j.testkit.suite;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class CleanupTest {

    @Test
    void undoesByStageThenNewestFirst() {
        Cleanup cleanup = new Cleanup();
        List<String> ran = new ArrayList<>();
        cleanup.add(Cleanup.Stage.REMOVE_DIRECTORY, "dir", () -> ran.add("dir"));
        cleanup.add(Cleanup.Stage.DELETE_VOLUME, "volume 1", () -> ran.add("volume 1"));
        cleanup.add(Cleanup.Stage.DELETE_SNAPSHOT, "snapshot", () -> ran.add("snapshot"));
        cleanup.add(Cleanup.Stage.CONTROLLER_UNPUBLISH, "controller unpublish", () -> ran.add("controller unpublish"));
        cleanup.add(Cleanup.Stage.DELETE_VOLUME, "volume 2", () -> ran.add("volume 2"));
        cleanup.add(Cleanup.Stage.NODE_UNSTAGE, "unstage", () -> ran.add("unstage"));
        cleanup.add(Cleanup.Stage.NODE_UNPUBLISH, "unpublish", () -> ran.add("unpublish"));
        cleanup.add(Cleanup.Stage.DELETE_VOLUME_GROUP, "group", () -> ran.add("group"));
        cleanup.add(Cleanup.Stage.LEAVE_VOLUME_GROUP, "leave", () -> ran.add("leave"));
        cleanup.add(Cleanup.Stage.DELETE_GROUP_SNAPSHOT, "group snapshot", () -> ran.add("group snapshot"));
        assertEquals(10, cleanup.pending());
        assertEquals(List.of(), cleanup.runAll());
        assertEquals(List.of("unpublish", "unstage", "controller unpublish", "leave", "group snapshot", "snapshot",
                "volume 2", "volume 1", "group", "dir"), ran);
        assertEquals(0, cleanup.pending());
    }

    @Test
    void skipsWhatTheTestUndidAndReportsWhatFailed() {
        Cleanup cleanup = new Cleanup();
        List<String> ran = new ArrayList<>();
        Cleanup.Handle done = cleanup.add(Cleanup.Stage.DELETE_VOLUME, "volume 1", () -> ran.add("volume 1"));
        cleanup.add(Cleanup.Stage.NODE_UNPUBLISH, "unpublish", () -> {
            throw new IllegalStateException("busy");
        });
        cleanup.add(Cleanup.Stage.DELETE_VOLUME, "volume 2", () -> ran.add("volume 2"));
        done.done();
        assertEquals(List.of("unpublish: IllegalStateException: busy"), cleanup.runAll());
        assertEquals(List.of("volume 2"), ran);
    }

    @Test
    void retriesAStepThatNeededALaterOne() {
        Cleanup cleanup = new Cleanup();
        List<String> ran = new ArrayList<>();
        cleanup.add(Cleanup.Stage.DELETE_VOLUME, "restored volume", () -> ran.add("restored volume"));
        cleanup.add(Cleanup.Stage.DELETE_SNAPSHOT, "snapshot", () -> {
            if (!ran.contains("restored volume")) throw new IllegalStateException("snapshot in use");
            ran.add("snapshot");
        });
        assertEquals(List.of(), cleanup.runAll());
        assertEquals(List.of("restored volume", "snapshot"), ran);
        assertEquals(List.of(), cleanup.runAll());
    }
}
