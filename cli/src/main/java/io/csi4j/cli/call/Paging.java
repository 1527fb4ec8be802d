package io.csi4j.cli.call;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.function.Function;

/** {@code --paging}: calls a List RPC again with each next_token until the plugin returns none. */
final class Paging {
    private Paging() {}

    /** The first page only, or (with {@code follow}) every page from {@code startingToken} on. */
    static <R> List<R> pages(String startingToken, boolean follow, Function<String, R> call, Function<R, String> nextToken) {
        var pages = new ArrayList<R>();
        var seen = new HashSet<String>();
        String token = startingToken == null ? "" : startingToken;
        while (true) {
            R page = call.apply(token);
            pages.add(page);
            token = nextToken.apply(page);
            if (!follow || token.isEmpty()) return pages;
            // a plugin that hands out the same token twice would make us loop forever
            if (!seen.add(token)) throw new IllegalStateException("the plugin returned next_token '" + token + "' twice; stopping");
        }
    }
}
