package io.csi4j.testkit.reference;

/** A deliberate bug the reference plugin can be built with, to prove the suite catches it. */
public enum Flaw {
    /** ControllerPublishVolume answers OK for a volume that does not exist. */
    PUBLISH_MISSING_VOLUME_OK,
    /** NodeStageVolume answers OK for a volume that does not exist. */
    STAGE_MISSING_VOLUME_OK,
    /** GetSnapshot answers OK (with an empty snapshot) for a snapshot that does not exist. */
    GET_MISSING_SNAPSHOT_OK,
    /** List RPCs honour max_entries but never set next_token. */
    FORGETS_NEXT_TOKEN,
    /** List RPCs return every entry whatever max_entries says. */
    IGNORES_MAX_ENTRIES,
    /** CreateVolume of an existing name with a different size answers OK with the old volume. */
    CREATE_SIZE_CONFLICT_OK,
    /** DeleteVolume of a volume that does not exist answers NOT_FOUND. */
    DELETE_MISSING_VOLUME_NOT_FOUND,
    /** CreateVolume without a name succeeds (makes one up). */
    ACCEPTS_MISSING_NAME,
    /** NodeUnpublishVolume leaves the target path behind. */
    LEAVES_TARGET_PATH,
    /** A snapshot copies its source only when restored, so it is not point-in-time. */
    LAZY_SNAPSHOT,
    /** Concurrent CreateVolume calls with one name race and can create two volumes. */
    RACY_CREATE,
    /** NodeGetVolumeStats never answers. */
    HANGS_ON_STATS,
    /** GetSnapshot of a missing snapshot answers NOT_FOUND without a message. */
    ERROR_WITHOUT_MESSAGE,
    /** ControllerGetVolume of a missing volume answers NOT_FOUND with status details in its trailers. */
    ERROR_WITH_DETAILS,
    /** CreateVolume puts the request's secrets into its INVALID_ARGUMENT message. */
    LEAKS_SECRET_IN_ERROR,
    /** Node RPCs refuse paths longer than 128 bytes (the general string limit, which paths override). */
    SHORT_PATHS_ONLY,
    /** The node side ignores that ControllerPublishVolume was readonly. */
    NODE_IGNORES_CONTROLLER_READONLY,
    /** NodeExpandVolume ignores its volume_capability. */
    EXPAND_IGNORES_CAPABILITY,
    /** ControllerUnpublishVolume without node_id unpublishes nothing. */
    UNPUBLISH_WITHOUT_NODE_IGNORED,
    /** NodeGetInfo reports a topology value longer than 63 characters. */
    LONG_TOPOLOGY_VALUE,
    /** An empty snapshot_ids or mutable_parameters (proto3: the same as absent) is refused with INVALID_ARGUMENT. */
    REFUSES_EMPTY_REQUIRED_LISTS,
    /** ListSnapshots with a negative max_entries takes the plugin down (its servers shut down, no answer), like a panic. */
    EXITS_ON_NEGATIVE_MAX_ENTRIES,
    /** SnapshotMetadata sends every tuple in one message, whatever max_results says. */
    METADATA_IGNORES_MAX_RESULTS
}
