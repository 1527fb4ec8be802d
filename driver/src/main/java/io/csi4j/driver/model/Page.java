package io.csi4j.driver.model;

import java.util.List;

/**
 * One page of a keyset-paged list. {@code lastSeq} is the seq of the last item (or the {@code afterSeq} asked
 * for when empty): pass it as {@code afterSeq} to get the next page. {@code more} says whether one exists.
 */
public record Page<T>(List<T> items, long lastSeq, boolean more) {
    public Page {
        items = List.copyOf(items);
    }
}
