package io.csi4j.driver.volume;

import io.csi4j.driver.id.ObjectId;
import io.csi4j.sdk.CsiException;

/** Objects of another node are refused with that node's name, so the caller knows where to go. */
public final class Ownership {
    private Ownership() {}

    public static void requireLocal(ObjectId id, String localNodeId, String what) {
        if (!id.ownedBy(localNodeId)) {
            throw CsiException.failedPrecondition(what + " " + id + " lives on node '" + id.nodeTag()
                    + "', not on this plugin's node '" + localNodeId + "'; send the request to that node's plugin");
        }
    }
}
