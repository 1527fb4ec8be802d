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
    HANGS_ON_STATS
}
