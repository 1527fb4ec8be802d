package io.csi4j.driver.cluster;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Which agent serves a node when several addresses say they are that node (two agents started with the same
 * {@code --node-id}, or a pod that moved while its old address still resolves). Pure: the caller says who held
 * each node before and who answers now; the rule is
 * <ol>
 *   <li>the holder keeps its node while it answers: a later claimant is refused, whatever its address;</li>
 *   <li>a holder that no longer answers gives the node to a claimant that answers (a moved pod takes over);</li>
 *   <li>among new claimants, the one that claimed first, then the smallest address (deterministic);</li>
 *   <li>nobody answers: the holder keeps the node (its calls fail UNAVAILABLE naming it).</li>
 * </ol>
 * The refused are not routed to, not listed, and visible in {@code csi4j cluster status} with the reason.
 */
final class Claims {
    private Claims() {}

    /** One identified agent: its address, the node it says it is, whether it answered last time, when it first said so. */
    record Claimant(String address, String nodeId, boolean live, long claimedSince) {}

    /** The holder of every claimed node (node id to address), and why each other claimant was refused (address to reason). */
    record Decision(Map<String, String> holders, Map<String, String> refused) {}

    /**
     * @param previousHolders node id to the address that held it after the last decision
     * @param claimants every identified agent now
     */
    static Decision decide(Map<String, String> previousHolders, List<Claimant> claimants) {
        Map<String, List<Claimant>> byNode = new LinkedHashMap<>();
        for (Claimant c : claimants) byNode.computeIfAbsent(c.nodeId(), k -> new ArrayList<>()).add(c);
        Map<String, String> holders = new HashMap<>();
        Map<String, String> refused = new HashMap<>();
        for (var entry : byNode.entrySet()) {
            String node = entry.getKey();
            List<Claimant> all = entry.getValue();
            Claimant previous = all.stream().filter(c -> c.address().equals(previousHolders.get(node))).findFirst().orElse(null);
            Claimant holder;
            if (previous != null && (previous.live() || all.stream().noneMatch(Claimant::live))) {
                holder = previous;
            } else {
                Comparator<Claimant> order = Comparator.comparing((Claimant c) -> !c.live())
                        .thenComparingLong(Claimant::claimedSince).thenComparing(Claimant::address);
                holder = all.stream().min(order).orElseThrow();
            }
            holders.put(node, holder.address());
            for (Claimant c : all) {
                if (c == holder) continue;
                refused.put(c.address(), "node '" + node + "' is already served by " + holder.address()
                        + (holder.live() ? "" : " (not answering now)") + "; a second agent claiming it is not used");
            }
        }
        return new Decision(Map.copyOf(holders), Map.copyOf(refused));
    }
}
