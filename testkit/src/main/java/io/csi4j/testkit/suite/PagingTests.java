package io.csi4j.testkit.suite;

import static io.csi4j.proto.csi.ControllerServiceCapability.RPC.Type.CREATE_DELETE_SNAPSHOT;
import static io.csi4j.proto.csi.ControllerServiceCapability.RPC.Type.CREATE_DELETE_VOLUME;
import static io.csi4j.proto.csi.ControllerServiceCapability.RPC.Type.LIST_SNAPSHOTS;
import static io.csi4j.proto.csi.ControllerServiceCapability.RPC.Type.LIST_VOLUMES;
import static io.csi4j.testkit.suite.Verdicts.check;
import static io.csi4j.testkit.suite.Verdicts.fails;
import static io.csi4j.testkit.suite.Verdicts.ok;

import io.csi4j.proto.addons.identity.Capability;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Pagination of ListVolumes, ListSnapshots and ListVolumeGroups: exact coverage for every
 * max_entries from 1 to N+1, tolerance of objects added and removed between pages, invalid
 * starting tokens (ABORTED) and negative max_entries (INVALID_ARGUMENT).
 */
final class PagingTests {
    private PagingTests() {}

    /** How many objects each paging test creates. */
    static final int OBJECTS = 4;

    /** Creates and deletes the objects a list RPC lists. */
    interface Objects {
        String create(int index);

        void delete(String id);
    }

    interface Fixture {
        Objects prepare(TestContext ctx);
    }

    static List<SanityTest> tests() {
        Catalog c = new Catalog();
        paging(c, "Controller/ListVolumes", Listing.VOLUMES, Requirement.controller(CREATE_DELETE_VOLUME, LIST_VOLUMES), Requirement.controller(LIST_VOLUMES),
                ctx -> new Objects() {
                    public String create(int i) { return ctx.createVolume("page" + i).getVolumeId(); }
                    public void delete(String id) { ctx.deleteVolume(id); }
                });
        paging(c, "Controller/ListSnapshots", Listing.SNAPSHOTS, Requirement.controller(CREATE_DELETE_VOLUME, CREATE_DELETE_SNAPSHOT, LIST_SNAPSHOTS),
                Requirement.controller(LIST_SNAPSHOTS),
                ctx -> {
                    String source = ctx.createVolume("page-source").getVolumeId();
                    return new Objects() {
                        public String create(int i) { return ctx.createSnapshot(source, "page" + i).getSnapshotId(); }
                        public void delete(String id) { ctx.deleteSnapshot(id); }
                    };
                });
        paging(c, "VolumeGroup/ListVolumeGroups", Listing.VOLUME_GROUPS,
                Requirement.volumeGroup(Capability.VolumeGroup.Type.VOLUME_GROUP, Capability.VolumeGroup.Type.LIST_VOLUME_GROUPS),
                Requirement.volumeGroup(Capability.VolumeGroup.Type.LIST_VOLUME_GROUPS),
                ctx -> new Objects() {
                    public String create(int i) { return VolumeGroupTests.createGroup(ctx, ctx.name("page" + i), List.of()).getVolumeGroupId(); }
                    public void delete(String id) { VolumeGroupTests.deleteGroup(ctx, id); }
                });
        return c.tests();
    }

    private static void paging(Catalog c, String path, Listing.Pager pager, Requirement withObjects, Requirement listOnly, Fixture fixture) {
        String rpc = pager.rpc();

        c.add(path + "/pages cover every entry exactly once for max_entries 1.." + (OBJECTS + 1), withObjects, ctx -> {
            Objects objects = fixture.prepare(ctx);
            Set<String> created = new LinkedHashSet<>();
            for (int i = 0; i < OBJECTS; i++) created.add(objects.create(i));
            check(created.size() == OBJECTS, rpc + ": the id of each object MUST uniquely identify it among all objects of the plugin",
                    () -> OBJECTS + " objects created, " + created.size() + " distinct ids " + created);
            List<String> everything = Listing.all(ctx, pager);
            check(everything.containsAll(created), rpc + " SHALL return all the objects the plugin knows about",
                    () -> "without max_entries it missed " + missing(created, everything));
            for (int max = 1; max <= OBJECTS + 1; max++) {
                int m = max;
                List<String> seen = Listing.walk(ctx, pager, m, "", everything.size() / m + 3,
                        rpc + " MUST accept the next_token it returned as starting_token");
                check(seen.containsAll(created),
                        rpc + ": if there are more entries than max_entries, the Plugin MUST set next_token, and its pages together list every entry",
                        () -> "max_entries=" + m + " listed " + seen.size() + " of " + everything.size() + " entries, missing " + missing(created, seen));
                String twice = firstDuplicate(seen);
                check(twice == null,
                        rpc + ": an entry appears on more than one page only when objects are created or deleted while paging",
                        () -> "max_entries=" + m + " listed " + twice + " twice with nothing changing");
            }
        });

        c.add(path + "/tolerates entries added and removed between pages", withObjects, ctx -> {
            Objects objects = fixture.prepare(ctx);
            List<String> created = new ArrayList<>();
            for (int i = 0; i < OBJECTS; i++) created.add(objects.create(i));
            int total = Listing.all(ctx, pager).size();
            Listing.Page first = ok(rpc + " MUST succeed", () -> pager.page(ctx, 2, ""));
            check(first.ids().size() <= 2, rpc + ": the Plugin MUST NOT return more entries than max_entries",
                    () -> first.ids().size() + " entries for max_entries=2");
            check(!first.nextToken().isEmpty(), rpc + ": if the actual number of entries is more than max_entries, the Plugin MUST set next_token",
                    () -> "no next_token after 2 of " + total + " entries");
            String removed = first.ids().stream().filter(created::contains).reduce((a, b) -> b).orElse(created.getLast());
            objects.delete(removed);
            String added = objects.create(OBJECTS);
            Listing.walk(ctx, pager, 2, first.nextToken(), total + 4,
                    rpc + ": objects created or deleted while paging MAY cause duplicates or omissions, but the next_token MUST still be accepted");
            List<String> after = Listing.all(ctx, pager);
            check(after.contains(added) && !after.contains(removed), rpc + " SHALL return the objects the plugin knows about once paging is over",
                    () -> (after.contains(added) ? "" : "the added " + added + " is missing") + (after.contains(removed) ? " the removed " + removed + " is still listed" : ""));
        });

        c.add(path + "/an invalid starting_token fails with ABORTED", listOnly, ctx ->
                fails(Status.Code.ABORTED, rpc + ": an invalid starting_token MUST fail with ABORTED",
                        () -> pager.page(ctx, 0, "csi4j-sanity/invalid-token/" + ctx.name("token"))));

        c.add(path + "/a negative max_entries fails with INVALID_ARGUMENT", listOnly, ctx ->
                fails(Status.Code.INVALID_ARGUMENT, rpc + ": max_entries MUST NOT be negative; an invalid field MUST fail with INVALID_ARGUMENT",
                        () -> pager.page(ctx, -1, "")));
    }

    private static List<String> missing(Set<String> expected, List<String> seen) {
        Set<String> all = new HashSet<>(seen);
        return expected.stream().filter(id -> !all.contains(id)).toList();
    }

    private static String firstDuplicate(List<String> ids) {
        Set<String> seen = new HashSet<>();
        for (String id : ids) if (!seen.add(id)) return id;
        return null;
    }
}
