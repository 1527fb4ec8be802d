package io.csi4j.driver.cluster;

import io.csi4j.sdk.CsiException;
import java.util.ArrayList;
import java.util.List;

/**
 * One page of a list merged across nodes: nodes in node-id order, each node's entries in its own order.
 * Each node is asked for what is left of the page with its own cursor; the whole answer of a node is always
 * taken (nothing fetched is dropped), so a node's next_token is the exact cursor to continue from.
 */
final class MergedListing {
    /** Without max_entries, a merged page holds at most this many entries (a node may give fewer). */
    static final int DEFAULT_PAGE = 1000;
    /**
     * Ask no further once a page holds this many bytes: one more answer (an agent keeps each under 3 MiB) then
     * still fits under the 4 MiB a gRPC client accepts by default.
     */
    static final int PAGE_BYTES = 512 << 10;

    /** What one node answered for one request. */
    record Slice<E>(List<E> entries, String nextToken, int bytes) {}

    @FunctionalInterface
    interface Source<E> {
        Slice<E> page(Agent agent, String startingToken, int maxEntries);
    }

    record Page<E>(List<E> entries, String nextToken) {}

    private MergedListing() {}

    static <E> Page<E> page(ClusterPageToken tokens, String kind, String filter, List<Agent> nodes, String startingToken,
                            int maxEntries, Source<E> source) {
        if (maxEntries < 0) throw CsiException.invalidArgument("max_entries must not be negative");
        ClusterPageToken.Position position = tokens.decode(kind, filter, startingToken);
        int index = 0;
        String cursor = "";
        if (position != null) {
            index = -1;
            for (int i = 0; i < nodes.size(); i++) if (position.at(nodes.get(i).nodeId())) index = i;
            if (index < 0) throw ClusterPageToken.invalid(kind, "the node it was listing is no longer in the cluster; start again");
            cursor = position.nodeToken();
        }
        int limit = maxEntries == 0 ? DEFAULT_PAGE : maxEntries;
        List<E> entries = new ArrayList<>();
        int bytes = 0;
        while (index < nodes.size()) {
            Agent node = nodes.get(index);
            String from = cursor;
            Slice<E> slice = node.call(a -> source.page(a, from, limit - entries.size()));
            entries.addAll(slice.entries());
            bytes += slice.bytes();
            if (!slice.nextToken().isEmpty()) {
                cursor = slice.nextToken();
            } else {
                index++;
                cursor = "";
            }
            boolean full = entries.size() >= limit || bytes >= PAGE_BYTES;
            if (full && index < nodes.size()) {
                return new Page<>(entries, tokens.encode(kind, filter, nodes.get(index).nodeId(), cursor));
            }
        }
        return new Page<>(entries, "");
    }
}
