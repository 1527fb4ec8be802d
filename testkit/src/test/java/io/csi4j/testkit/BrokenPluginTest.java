package io.csi4j.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.testkit.reference.Flaw;
import io.csi4j.testkit.reference.Options;
import io.csi4j.testkit.reference.ReferencePlugin;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Each deliberately broken plugin is caught: the named test fails with a message naming the spec rule it breaks. */
class BrokenPluginTest {

    /** A flaw, a test that must catch it, and the words its failure message must contain. */
    static Stream<Arguments> flaws() {
        return Stream.of(
                Arguments.of(Flaw.PUBLISH_MISSING_VOLUME_OK, "Controller/ControllerPublishVolume/a volume that does not exist fails with NOT_FOUND",
                        "spec: ControllerPublishVolume: a volume that does not exist MUST fail with NOT_FOUND; got OK"),
                Arguments.of(Flaw.STAGE_MISSING_VOLUME_OK, "Node/NodeStageVolume/a volume that does not exist fails with NOT_FOUND",
                        "spec: NodeStageVolume: a volume that does not exist MUST fail with NOT_FOUND; got OK"),
                Arguments.of(Flaw.GET_MISSING_SNAPSHOT_OK, "Controller/GetSnapshot/a snapshot that does not exist fails with NOT_FOUND",
                        "spec: GetSnapshot: a snapshot that does not exist MUST fail with NOT_FOUND; got OK"),
                Arguments.of(Flaw.FORGETS_NEXT_TOKEN, "Controller/ListVolumes/pages cover every entry exactly once for max_entries 1..5",
                        "spec: ListVolumes: if there are more entries than max_entries, the Plugin MUST set next_token"),
                Arguments.of(Flaw.FORGETS_NEXT_TOKEN, "Controller/ListSnapshots/pages cover every entry exactly once for max_entries 1..5",
                        "spec: ListSnapshots: if there are more entries than max_entries, the Plugin MUST set next_token"),
                Arguments.of(Flaw.FORGETS_NEXT_TOKEN, "VolumeGroup/ListVolumeGroups/pages cover every entry exactly once for max_entries 1..5",
                        "spec: ListVolumeGroups: if there are more entries than max_entries, the Plugin MUST set next_token"),
                Arguments.of(Flaw.IGNORES_MAX_ENTRIES, "Controller/ListVolumes/pages cover every entry exactly once for max_entries 1..5",
                        "spec: ListVolumes: if max_entries is specified, the Plugin MUST NOT return more entries than this number; got"),
                Arguments.of(Flaw.IGNORES_MAX_ENTRIES, "Controller/ListSnapshots/tolerates entries added and removed between pages",
                        "spec: ListSnapshots: the Plugin MUST NOT return more entries than max_entries; got"),
                Arguments.of(Flaw.CREATE_SIZE_CONFLICT_OK, "Controller/CreateVolume/the same name with a different size fails with ALREADY_EXISTS",
                        "spec: CreateVolume: a volume of that name that is incompatible with the capacity_range MUST fail with ALREADY_EXISTS; got OK"),
                Arguments.of(Flaw.DELETE_MISSING_VOLUME_NOT_FOUND, "Controller/DeleteVolume/a volume that does not exist answers OK",
                        "spec: DeleteVolume MUST reply OK for a volume that does not exist; got NOT_FOUND"),
                Arguments.of(Flaw.DELETE_MISSING_VOLUME_NOT_FOUND, "Controller/DeleteVolume/deletes a volume and repeated calls answer OK",
                        "spec: DeleteVolume MUST be idempotent: a volume that no longer exists MUST reply OK; got NOT_FOUND"),
                Arguments.of(Flaw.ACCEPTS_MISSING_NAME, "Controller/CreateVolume/missing name fails with INVALID_ARGUMENT",
                        "spec: CreateVolume: a request missing the REQUIRED field name MUST fail with INVALID_ARGUMENT; got OK"),
                Arguments.of(Flaw.LEAVES_TARGET_PATH, "Node/NodeUnpublishVolume/unpublishes, removes the target path, and repeated calls answer OK",
                        "spec: NodeUnpublishVolume: the SP MUST delete the file or directory it created at target_path; got"),
                Arguments.of(Flaw.LAZY_SNAPSHOT, "Lifecycle/snapshot/a volume restored from a snapshot holds the data of the moment the snapshot was cut",
                        "spec: CreateVolume from a snapshot: the new volume is pre-populated with the snapshot's data (as of when it was cut); got bytes differ at offset 0"),
                Arguments.of(Flaw.RACY_CREATE, "Controller/CreateVolume/concurrent identical requests create one volume",
                        "new volumes listed"),
                Arguments.of(Flaw.HANGS_ON_STATS, "Node/NodeGetVolumeStats/reports the usage of a published volume",
                        "spec: NodeGetVolumeStats MUST succeed for a published volume (GET_VOLUME_STATS); got DEADLINE_EXCEEDED"),
                Arguments.of(Flaw.ERROR_WITHOUT_MESSAGE, "Controller/GetSnapshot/a snapshot that does not exist fails with NOT_FOUND",
                        "spec: Error scheme: the status message MUST contain a human readable description of the error if the code is not OK; got NOT_FOUND with an empty message"),
                Arguments.of(Flaw.ERROR_WITH_DETAILS, "Controller/ControllerGetVolume/a volume that does not exist fails with NOT_FOUND",
                        "spec: Error scheme: the status details MUST be empty; got NOT_FOUND"),
                Arguments.of(Flaw.LEAKS_SECRET_IN_ERROR, "Controller/CreateVolume/an error message does not contain a secret value",
                        "spec: csi_secret: a secret field MUST be treated as sensitive"),
                Arguments.of(Flaw.SHORT_PATHS_ONLY, "Lifecycle/long paths/staging and target paths longer than 128 bytes work at every node RPC",
                        "the SP MUST accept a path of at least 128 bytes"),
                Arguments.of(Flaw.NODE_IGNORES_CONTROLLER_READONLY, "Lifecycle/readonly/a volume controller-published readonly cannot be written on the node",
                        "spec: ControllerPublishVolume: readonly=true means the SP MUST publish the volume in readonly mode; got the node published it writable"),
                Arguments.of(Flaw.EXPAND_IGNORES_CAPABILITY, "Node/NodeExpandVolume/a volume_capability the volume does not support fails with INVALID_ARGUMENT",
                        "spec: NodeExpandVolume: capabilities not supported by the volume MUST fail with INVALID_ARGUMENT (exceeds capabilities); got OK"),
                Arguments.of(Flaw.UNPUBLISH_WITHOUT_NODE_IGNORED, "Controller/ControllerUnpublishVolume/without node_id unpublishes the volume from every node",
                        "spec: ControllerUnpublishVolume without node_id: the SP MUST unpublish the volume from all nodes it is published to; got published_node_ids still"),
                Arguments.of(Flaw.LONG_TOPOLOGY_VALUE, "Node/NodeGetInfo/returns a node_id",
                        "spec: NodeGetInfoResponse.accessible_topology: a topology value MUST be 63 characters or less"),
                Arguments.of(Flaw.REFUSES_EMPTY_REQUIRED_LISTS, "Controller/ControllerModifyVolume/empty mutable_parameters answer OK",
                        "spec: ControllerModifyVolume: SPs MUST NOT modify volumes based on the absence of keys (an empty mutable_parameters cannot be told from an absent one in proto3: its REQUIRED binds the CO; a request naming no key asks for no change); got INVALID_ARGUMENT"),
                Arguments.of(Flaw.REFUSES_EMPTY_REQUIRED_LISTS, "GroupController/GetVolumeGroupSnapshot/a group snapshot that does not exist, asked without snapshot_ids, fails with NOT_FOUND",
                        "spec: GetVolumeGroupSnapshot: a volume group snapshot that does not exist MUST fail with NOT_FOUND (an empty snapshot_ids cannot be told from an absent one in proto3: its REQUIRED binds the CO); got INVALID_ARGUMENT"),
                Arguments.of(Flaw.METADATA_IGNORES_MAX_RESULTS, "SnapshotMetadata/GetMetadataAllocated/streams tuples by the spec's rules",
                        "spec: GetMetadataAllocated: with max_results > 0 a message MUST hold at most max_results tuples"),
                Arguments.of(Flaw.EXITS_ON_NEGATIVE_MAX_ENTRIES, "Controller/ListSnapshots/a negative max_entries fails with INVALID_ARGUMENT",
                        "spec: ListSnapshots: max_entries MUST NOT be negative; an invalid field MUST fail with INVALID_ARGUMENT; got "));  // UNAVAILABLE or CANCELLED, as the server went
    }

    @ParameterizedTest(name = "{0} caught by {1}")
    @MethodSource("flaws")
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void catchesTheFlaw(Flaw flaw, String test, String message, @TempDir Path dir) throws Exception {
        try (ReferencePlugin plugin = ReferencePlugin.start(Files.createDirectories(dir.resolve("plugin")), Options.full(), Set.of(flaw))) {
            SanityConfig config = ReferencePluginConformanceTest.config(plugin, AccessType.MOUNT)
                    .stagingDir(dir.resolve("staging"))
                    .targetDir(dir.resolve("target"))
                    .callTimeout(Duration.ofSeconds(flaw == Flaw.HANGS_ON_STATS ? 1 : 20))
                    .build();
            StringBuilder log = new StringBuilder();
            SanityReport report = ReferencePluginConformanceTest.run(config, log);
            TestResult result = report.results().stream().filter(r -> r.name().equals(test)).findFirst()
                    .orElseThrow(() -> new AssertionError("no test " + test + "\n" + log));
            assertEquals(Outcome.FAILED, result.outcome(), () -> test + " did not catch " + flaw + "\n" + log);
            assertTrue(result.message().contains(message), () -> "message of " + test + " is\n  " + result.message() + "\nnot containing\n  " + message);
            assertTrue(report.failed() >= 1 && !report.succeeded());
            assertTrue(log.toString().strip().endsWith(report.summary()));
            assertTrue(result.message().contains("\nrequest: ") || result.message().contains("\nlast request: "),
                    () -> "the failure of " + test + " names no request:\n" + result.message());
            assertEquals("", plugin.leftovers(), () -> "the suite left objects behind with " + flaw + ":\n" + log);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("everyFlaw")
    void everyFlawIsCaughtSomewhere(Flaw flaw) {
        assertTrue(flaws().anyMatch(a -> a.get()[0] == flaw), () -> flaw + " has no test that proves the suite catches it");
    }

    static List<Flaw> everyFlaw() {
        return List.of(Flaw.values());
    }
}
