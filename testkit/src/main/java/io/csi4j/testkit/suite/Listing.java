package io.csi4j.testkit.suite;

import static io.csi4j.testkit.suite.Verdicts.check;
import static io.csi4j.testkit.suite.Verdicts.ok;

import io.csi4j.proto.csi.ListSnapshotsRequest;
import io.csi4j.proto.csi.ListSnapshotsResponse;
import io.csi4j.proto.csi.ListVolumesRequest;
import io.csi4j.proto.csi.ListVolumesResponse;
import java.util.ArrayList;
import java.util.List;
import io.csi4j.proto.addons.volumegroup.ListVolumeGroupsRequest;

/**
 * Paging through ListVolumes, ListSnapshots and ListVolumeGroups, with the checks every page gets:
 * never more entries than max_entries, and an end within a bounded number of pages.
 */
final class Listing {
    private Listing() {}

    record Page(List<String> ids, String nextToken) {}

    /** One list RPC seen as pages of object ids. */
    interface Pager {
        String rpc();

        Page page(TestContext ctx, int maxEntries, String startingToken);
    }

    static final Pager VOLUMES = new Pager() {
        public String rpc() { return "ListVolumes"; }

        public Page page(TestContext ctx, int max, String token) {
            ListVolumesResponse r = ctx.controller().listVolumes(ListVolumesRequest.newBuilder().setMaxEntries(max).setStartingToken(token).build());
            return new Page(r.getEntriesList().stream().map(e -> e.getVolume().getVolumeId()).toList(), r.getNextToken());
        }
    };

    static final Pager SNAPSHOTS = new Pager() {
        public String rpc() { return "ListSnapshots"; }

        public Page page(TestContext ctx, int max, String token) {
            ListSnapshotsResponse r = ctx.controller().listSnapshots(ListSnapshotsRequest.newBuilder()
                    .setMaxEntries(max).setStartingToken(token).putAllSecrets(ctx.secrets()).build());
            return new Page(r.getEntriesList().stream().map(e -> e.getSnapshot().getSnapshotId()).toList(), r.getNextToken());
        }
    };

    static final Pager VOLUME_GROUPS = new Pager() {
        public String rpc() { return "ListVolumeGroups"; }

        public Page page(TestContext ctx, int max, String token) {
            var r = ctx.volumeGroups().listVolumeGroups(ListVolumeGroupsRequest.newBuilder()
                    .setMaxEntries(max).setStartingToken(token).putAllSecrets(ctx.secrets()).build());
            return new Page(r.getEntriesList().stream().map(e -> e.getVolumeGroup().getVolumeGroupId()).toList(), r.getNextToken());
        }
    };

    /** Every page from {@code startingToken} on; fails when a page is too long or the pages do not end within {@code maxPages}. */
    static List<String> walk(TestContext ctx, Pager pager, int maxEntries, String startingToken, int maxPages, String rule) {
        List<String> seen = new ArrayList<>();
        String token = startingToken;
        for (int pages = 0; ; pages++) {
            check(pages < maxPages, pager.rpc() + ": next_token leads to the next page, and the last page has none",
                    () -> "still a next_token after " + maxPages + " pages of max_entries=" + maxEntries + " (" + seen.size() + " entries)");
            String current = token;
            Page page = ok(current.isEmpty() ? pager.rpc() + " MUST succeed" : rule, () -> pager.page(ctx, maxEntries, current));
            check(page.ids().stream().noneMatch(String::isEmpty), pager.rpc() + ": each entry's object (and its id) is REQUIRED",
                    () -> "an entry without an id");
            check(maxEntries == 0 || page.ids().size() <= maxEntries,
                    pager.rpc() + ": if max_entries is specified, the Plugin MUST NOT return more entries than this number",
                    () -> page.ids().size() + " entries for max_entries=" + maxEntries);
            seen.addAll(page.ids());
            if (page.nextToken().isEmpty()) return seen;
            token = page.nextToken();
        }
    }

    static List<String> all(TestContext ctx, Pager pager) {
        return walk(ctx, pager, 0, "", 10_000, pager.rpc() + " MUST accept the next_token it returned as starting_token");
    }

    /** Full ListVolumes entries (every page). */
    static List<ListVolumesResponse.Entry> volumes(TestContext ctx) {
        List<ListVolumesResponse.Entry> entries = new ArrayList<>();
        String token = "";
        for (int pages = 0; pages < 10_000; pages++) {
            String current = token;
            ListVolumesResponse r = ok("ListVolumes MUST succeed (LIST_VOLUMES)",
                    () -> ctx.controller().listVolumes(ListVolumesRequest.newBuilder().setStartingToken(current).build()));
            entries.addAll(r.getEntriesList());
            if (r.getNextToken().isEmpty()) return entries;
            token = r.getNextToken();
        }
        throw new SpecViolation("ListVolumes: the last page has no next_token", "no end after 10000 pages");
    }

    /** Full ListSnapshots entries for a request (every page). */
    static List<ListSnapshotsResponse.Entry> snapshots(TestContext ctx, ListSnapshotsRequest request) {
        List<ListSnapshotsResponse.Entry> entries = new ArrayList<>();
        String token = "";
        for (int pages = 0; pages < 10_000; pages++) {
            ListSnapshotsRequest page = request.toBuilder().setStartingToken(token).putAllSecrets(ctx.secrets()).build();
            ListSnapshotsResponse r = ok("ListSnapshots MUST succeed (LIST_SNAPSHOTS)", () -> ctx.controller().listSnapshots(page));
            entries.addAll(r.getEntriesList());
            if (r.getNextToken().isEmpty()) return entries;
            token = r.getNextToken();
        }
        throw new SpecViolation("ListSnapshots: the last page has no next_token", "no end after 10000 pages");
    }
}
