package io.csi4j.driver.replication;

import java.time.Instant;
import java.util.Arrays;
import java.util.List;

/**
 * The note a failover leaves on the copy it promotes ({@link ReplicaState#failover}, the volume's condition): when, from
 * which point, and which nodes it replaced. One class writes and reads it, so the controller can tell from the new
 * primary's durable state which silent nodes the volume was failed over from ({@link HandoffPastSilence}). The replaced
 * nodes are the controller's list (forgotten nodes, then the silent one) joined by ", " (node ids are Kubernetes node
 * names: no comma, no quote); an agent older than this class wrote the same text.
 */
public final class FailoverNote {
    private static final String REPLACING = ", replacing node '";

    private FailoverNote() {}

    /** The note of a failover at {@code at} from {@code point}, replacing {@code replaced} (the wire's joined list). */
    public static String of(Instant at, String point, String replaced) {
        return "failed over at " + at + " from point " + point + REPLACING + replaced + "'";
    }

    /** The nodes a note says its failover replaced; none when {@code note} is empty or not a failover's note. */
    public static List<String> replaced(String note) {
        int from = note.lastIndexOf(REPLACING);
        if (!note.startsWith("failed over at ") || from < 0 || !note.endsWith("'")) return List.of();
        return nodes(note.substring(from + REPLACING.length(), note.length() - 1));
    }

    /** The nodes of a list joined by ", " (a note's, or {@link ReplicaState#replaced}); none when empty. */
    public static List<String> nodes(String joined) {
        if (joined.isEmpty()) return List.of();
        return Arrays.stream(joined.split(", ")).toList();
    }

    /** The list {@link #nodes} reads. */
    public static String joined(List<String> nodes) {
        return String.join(", ", nodes);
    }
}
