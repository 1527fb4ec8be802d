package io.csi4j.testkit.suite;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Everything a test created, undone after the test whether it passed or not: by stage (node side
 * first, storage objects after, directories last), and within a stage newest first.
 */
public final class Cleanup {

    /** The order in which objects are taken down; a later stage may depend on an earlier one being done. */
    public enum Stage {
        NODE_UNPUBLISH,
        NODE_UNSTAGE,
        CONTROLLER_UNPUBLISH,
        LEAVE_VOLUME_GROUP,
        DELETE_GROUP_SNAPSHOT,
        DELETE_SNAPSHOT,
        DELETE_VOLUME,
        DELETE_VOLUME_GROUP,
        REMOVE_DIRECTORY
    }

    @FunctionalInterface
    public interface Action {
        void run() throws Exception;
    }

    /** A registered undo step; {@link #done()} when the test has already undone it itself. */
    public final class Handle {
        private final Stage stage;
        private final String what;
        private final Action action;
        private final int order;
        private boolean done;

        private Handle(Stage stage, String what, Action action, int order) {
            this.stage = stage;
            this.what = what;
            this.action = action;
            this.order = order;
        }

        public void done() {
            synchronized (Cleanup.this) {
                done = true;
            }
        }

        public boolean isDone() {
            synchronized (Cleanup.this) {
                return done;
            }
        }
    }

    private final List<Handle> handles = new ArrayList<>();

    public synchronized Handle add(Stage stage, String what, Action action) {
        Handle handle = new Handle(stage, what, action, handles.size());
        handles.add(handle);
        return handle;
    }

    /** Runs every pending step in order, retrying once what failed; returns one line per step that failed twice. Never throws. */
    public List<String> runAll() {
        List<Handle> pending;
        synchronized (this) {
            pending = handles.stream()
                    .filter(h -> !h.done)
                    .sorted(Comparator.comparing((Handle h) -> h.stage).thenComparing(h -> -h.order))
                    .toList();
            handles.clear();
        }
        // A step can fail only because a later one has not run yet (a plugin that keeps a snapshot
        // while a volume restored from it exists): what failed gets one more try after the rest.
        List<Handle> failed = new ArrayList<>();
        for (Handle handle : pending) {
            if (attempt(handle) != null) failed.add(handle);
        }
        List<String> failures = new ArrayList<>();
        for (Handle handle : failed) {
            String failure = attempt(handle);
            if (failure != null) failures.add(failure);
        }
        return failures;
    }

    private static String attempt(Handle handle) {
        try {
            handle.action.run();
            return null;
        } catch (Throwable t) {
            return handle.what + ": " + Verdicts.describe(t);
        }
    }

    /** What is still to be undone, in order, without trying it (the plugin is gone); forgets it. */
    public synchronized String pendingSteps() {
        String steps = handles.stream()
                .filter(h -> !h.done)
                .sorted(Comparator.comparing((Handle h) -> h.stage).thenComparing(h -> -h.order))
                .map(h -> h.what)
                .collect(Collectors.joining("; "));
        handles.clear();
        return steps;
    }

    public synchronized int pending() {
        return (int) handles.stream().filter(h -> !h.done).count();
    }
}
