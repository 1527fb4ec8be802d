package io.csi4j.cli.call;

import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.stream.Collectors;

/** Helping a mistyped RPC name: the closest known name, and the known names one per line. */
final class RpcNames {
    private RpcNames() {}

    /**
     * The full name ({@code csi.v1.Controller/CreateVolume}) nearest to {@code typed} by edit distance, ignoring case:
     * against full names when {@code typed} has a service part, else against the bare RPC names. None when even the
     * nearest needs more than a third of the typed letters changed (at least 2 are allowed).
     */
    static Optional<String> closest(String typed, List<String> fullNames) {
        boolean full = typed.contains("/");
        String query = typed.toLowerCase(Locale.ROOT);
        int allowed = Math.max(2, typed.length() / 3);
        return fullNames.stream()
                .map(name -> new Candidate(name, distance(query, (full ? name : name.substring(name.indexOf('/') + 1)).toLowerCase(Locale.ROOT))))
                .filter(c -> c.distance() <= allowed)
                .min(Comparator.comparingInt(Candidate::distance))
                .map(Candidate::name);
    }

    /** The names, each on a line of its own, indented. */
    static String list(List<String> names) {
        return names.stream().map(n -> "\n  " + n).collect(Collectors.joining());
    }

    private record Candidate(String name, int distance) {}

    /** Levenshtein distance: insertions, deletions and substitutions. */
    static int distance(String a, String b) {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) previous[j] = j;
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int substitute = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(substitute, Math.min(previous[j], current[j - 1]) + 1);
            }
            int[] swap = previous;
            previous = current;
            current = swap;
        }
        return previous[b.length()];
    }
}
