package io.csi4j.driver.model;

/**
 * Life cycle of every catalogued object: intent ({@code CREATING}/{@code DELETING}) is committed before the
 * storage effect, the outcome after it. Rows left in an intermediate state are the reconciler's work.
 */
public enum State {
    CREATING,
    READY,
    DELETING;

    /** Transitions the protocol allows; anything else is a bug in the caller. */
    public boolean canBecome(State next) {
        return switch (this) {
            case CREATING -> next == READY || next == DELETING;  // done, or rolled back
            case READY -> next == DELETING;
            case DELETING -> next == READY;                     // a delete abandoned before its effect
        };
    }
}
