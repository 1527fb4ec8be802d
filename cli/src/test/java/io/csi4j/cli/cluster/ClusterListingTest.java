package io.csi4j.cli.cluster;

import static io.csi4j.cli.cluster.ClusterRoutingTest.createOn;
import static org.junit.jupiter.api.Assertions.*;

import io.csi4j.driver.testing.Privileged;
import io.csi4j.proto.csi.ControllerGrpc;
import io.csi4j.proto.csi.ListVolumesRequest;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Merged listings over many nodes, most of them empty or small: after a node is exhausted the following nodes are
 * asked at once; the pages must still be exactly what asking one node after the other gives (node order, no entry
 * twice, none missing, never more than max_entries), whatever the page size.
 */
class ClusterListingTest {

    @Test
    void pagesOverManySmallAndEmptyNodesAreExact(@TempDir Path tmp) throws Exception {
        Privileged.requireRoot();
        List<String> nodes = List.of("node-a", "node-b", "node-c", "node-d", "node-e", "node-f");
        try (var cluster = LocalCluster.start(tmp, nodes)) {
            var csi = ControllerGrpc.newBlockingStub(cluster.controllerChannel());
            int[] counts = {3, 0, 1, 0, 0, 4};  // node-b, node-d and node-e hold nothing
            List<String> expected = new ArrayList<>();
            for (int n = 0; n < nodes.size(); n++) {
                List<String> ids = new ArrayList<>();
                for (int i = 0; i < counts[n]; i++) ids.add(createOn(csi, "v-" + nodes.get(n) + "-" + i, nodes.get(n)).getVolumeId());
                // each node's own order is its catalog's: take it from the node alone
                expected.addAll(csi.listVolumes(ListVolumesRequest.getDefaultInstance()).getEntriesList().stream()
                        .map(e -> e.getVolume().getVolumeId()).filter(ids::contains).toList());
            }
            var whole = csi.listVolumes(ListVolumesRequest.getDefaultInstance()).getEntriesList().stream()
                    .map(e -> e.getVolume().getVolumeId()).toList();
            assertEquals(expected, whole, "one page: node order, each node's own order");
            for (int size = 1; size <= 9; size++) {
                List<String> paged = new ArrayList<>();
                String token = "";
                int pages = 0;
                do {
                    var r = csi.withDeadlineAfter(30, TimeUnit.SECONDS).listVolumes(ListVolumesRequest.newBuilder()
                            .setMaxEntries(size).setStartingToken(token).build());
                    assertTrue(r.getEntriesCount() <= size, "page of " + size + " held " + r.getEntriesCount());
                    paged.addAll(r.getEntriesList().stream().map(e -> e.getVolume().getVolumeId()).toList());
                    token = r.getNextToken();
                    assertTrue(++pages <= 20, "pages never end");
                } while (!token.isEmpty());
                assertEquals(whole, paged, "pages of " + size);
                Set<String> unique = new HashSet<>(paged);
                assertEquals(paged.size(), unique.size());
            }
        }
    }
}
