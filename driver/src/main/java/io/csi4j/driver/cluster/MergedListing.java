package io.csi4j.driver.cluster;

import io.csi4j.sdk.CsiException;
import java.util.ArrayList;
import java.util.List;
import io.grpc.Context;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

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

    /** After a node is exhausted with room left in the page, at most this many following nodes are asked at once. */
    static final int AHEAD = 16;

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
        var page = new Builder<E>(limit, index, cursor);
        while (page.index < nodes.size()) {
            Agent node = nodes.get(page.index);
            String from = page.cursor;
            int room = limit - page.entries.size();
            page.take(node.call(a -> source.page(a, from, room)));
            if (page.full() && page.index < nodes.size()) break;
            if (page.cursor.isEmpty() && !page.full() && page.index < nodes.size()) ahead(nodes, source, page);
            if (page.full() && page.index < nodes.size()) break;
        }
        return page.index < nodes.size() ? new Page<>(page.entries, tokens.encode(kind, filter, nodes.get(page.index).nodeId(), page.cursor))
                : new Page<>(page.entries, "");
    }

    /** The page being filled, and where it stands: the node being listed and that node's cursor. */
    private static final class Builder<E> {
        final int limit;
        final List<E> entries = new ArrayList<>();
        int bytes;
        int index;
        String cursor;

        Builder(int limit, int index, String cursor) {
            this.limit = limit;
            this.index = index;
            this.cursor = cursor;
        }

        /** Takes a node's whole answer; moves to the next node when it has no more. */
        void take(Slice<E> slice) {
            entries.addAll(slice.entries());
            bytes += slice.bytes();
            if (!slice.nextToken().isEmpty()) {
                cursor = slice.nextToken();
            } else {
                index++;
                cursor = "";
            }
        }

        boolean full() {
            return entries.size() >= limit || bytes >= PAGE_BYTES;
        }
    }

    /**
     * The node before was exhausted with room left: asks the next node for the room there is, and the nodes after
     * it for one entry each, all at once, and takes their answers in node order for as long as each is one a node
     * gave whole for a request from its start that fits: an empty node costs no round of its own, a big one at
     * most one small answer. The first answer that does not fit is dropped (that node is asked again by the caller
     * with the exact room); after an answer with a next_token the caller goes on from that token. A node whose
     * answer is not needed (the page filled before it) is not waited for, so a silent node there does not hold
     * the page up, and its failure is not the caller's. Every cursor stays a node's own next_token.
     */
    private static <E> void ahead(List<Agent> nodes, Source<E> source, Builder<E> page) {
        int first = page.index;
        int last = Math.min(nodes.size(), first + AHEAD);
        if (last - first < 2) return;  // one node: the caller asks it, exactly as it would have
        int room = page.limit - page.entries.size();
        List<Future<Slice<E>>> answers = new ArrayList<>();
        var executor = Executors.newVirtualThreadPerTaskExecutor();
        try {
            Context context = Context.current();
            for (int i = first; i < last; i++) {
                Agent node = nodes.get(i);
                int ask = i == first ? room : 1;  // what only an empty chain would have needed whole
                answers.add(executor.submit(context.wrap(() -> node.call(a -> source.page(a, "", ask)))));
            }
            for (int i = 0; i < answers.size() && !page.full(); i++) {
                Slice<E> slice;
                try {
                    slice = answers.get(i).get();
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof RuntimeException r) throw r;
                    throw new IllegalStateException(e.getCause());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw CsiException.aborted("interrupted while listing the nodes");
                }
                if (slice.entries().size() > page.limit - page.entries.size()) return;  // more than fits: asked again
                page.take(slice);
                if (!page.cursor.isEmpty()) return;  // the node has more: the caller goes on with its cursor
            }
        } finally {
            executor.shutdownNow();  // answers not needed are not waited for
        }
    }
}
