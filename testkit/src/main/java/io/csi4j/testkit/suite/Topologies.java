package io.csi4j.testkit.suite;

import static io.csi4j.testkit.suite.Verdicts.check;

import io.csi4j.proto.csi.Topology;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/** The spec's syntax of the topology a plugin reports (Volume.accessible_topology, NodeGetInfoResponse.accessible_topology). */
final class Topologies {
    private Topologies() {}

    private static final Pattern NAME = Pattern.compile("[a-zA-Z0-9]([-_.a-zA-Z0-9]{0,61}[a-zA-Z0-9])?");
    private static final Pattern PREFIX = Pattern.compile("[a-z0-9]([-.a-z0-9]{0,61}[a-z0-9])?");
    private static final Pattern VALUE = NAME;

    /** Checks every key and value; returns the key prefixes used ("" for a key without one). */
    static Set<String> verify(List<Topology> topologies, String field) {
        Set<String> prefixes = new TreeSet<>();
        for (Topology t : topologies) {
            Set<String> lowerCase = new HashSet<>();
            for (var segment : t.getSegmentsMap().entrySet()) {
                String key = segment.getKey();
                String value = segment.getValue();
                int slash = key.lastIndexOf('/');
                String prefix = slash < 0 ? "" : key.substring(0, slash);
                String name = key.substring(slash + 1);
                check(NAME.matcher(name).matches(),
                        field + ": a topology key name MUST be 63 characters or less, begin and end with an alphanumeric character, with '-', '_', '.' or alphanumerics between",
                        () -> "key '" + key + "'");
                check(slash < 0 || PREFIX.matcher(prefix).matches(),
                        field + ": a topology key prefix MUST be 63 characters or less, begin and end with a lower-case alphanumeric character, with '-', '.' or lower-case alphanumerics between",
                        () -> "key '" + key + "'");
                check(VALUE.matcher(value).matches(),
                        field + ": a topology value MUST be 63 characters or less, begin and end with an alphanumeric character, with '-', '_', '.' or alphanumerics between",
                        () -> "'" + key + "' = '" + value + "'");
                check(lowerCase.add(key.toLowerCase(Locale.ROOT)),
                        field + ": topology keys MUST be case-insensitive (two keys differing only in case MUST NOT both exist)",
                        () -> "key '" + key + "' twice");
                if (slash >= 0) prefixes.add(prefix);
            }
        }
        check(prefixes.size() <= 1, field + ": a topology key prefix MUST be identical across all topology keys returned by the SP",
                () -> "prefixes " + prefixes);
        return prefixes;
    }
}
