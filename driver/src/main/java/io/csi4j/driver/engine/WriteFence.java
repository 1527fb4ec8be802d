package io.csi4j.driver.engine;

import java.util.List;

/**
 * Capability: stop, at once, every write to a volume on this node, for a replicated volume's copy that learnt it was
 * superseded (fenced, docs/design.md "Replicated volumes"). Read from the kernel's mount table every time, so it is
 * idempotent and a restarted agent can apply it again. A volume that is neither mounted nor attached here has nothing to stop (its
 * writable stage and publish are refused by the replica's state).
 */
public interface WriteFence extends Capability {

    /**
     * Every filesystem of the volume mounted on this node stops taking writes (its staging mount and publish binds:
     * EROFS, or EIO when a writer held a file open so a remount was refused); returns one line per filesystem saying
     * what was done, empty when nothing is mounted or attached. A block volume's device refuses writes (EPERM) too.
     */
    List<String> stopWrites(String volumeId);
}
