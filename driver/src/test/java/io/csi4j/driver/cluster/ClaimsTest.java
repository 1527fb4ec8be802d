package io.csi4j.driver.cluster;

import static org.junit.jupiter.api.Assertions.*;

import io.csi4j.driver.cluster.Claims.Claimant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ClaimsTest {

    @Test
    void aLiveHolderKeepsItsNodeAgainstALaterClaimant() {
        // the later one has the smaller address and claimed first by the clock: neither matters against a live holder
        var d = Claims.decide(Map.of("n1", "10.0.0.9:7443"), List.of(
                new Claimant("10.0.0.9:7443", "n1", true, 50), new Claimant("10.0.0.1:7443", "n1", true, 10)));
        assertEquals("10.0.0.9:7443", d.holders().get("n1"));
        assertTrue(d.refused().get("10.0.0.1:7443").contains("already served by 10.0.0.9:7443"), d.refused().toString());
        assertFalse(d.refused().containsKey("10.0.0.9:7443"));
    }

    @Test
    void aSilentHolderGivesWayToOneThatAnswers() {
        var d = Claims.decide(Map.of("n1", "10.0.0.9:7443"), List.of(
                new Claimant("10.0.0.9:7443", "n1", false, 1), new Claimant("10.0.0.2:7443", "n1", true, 99)));
        assertEquals("10.0.0.2:7443", d.holders().get("n1"));
        assertTrue(d.refused().containsKey("10.0.0.9:7443"));
    }

    @Test
    void nobodyAnsweringKeepsTheHolder() {
        var d = Claims.decide(Map.of("n1", "10.0.0.9:7443"), List.of(
                new Claimant("10.0.0.2:7443", "n1", false, 1), new Claimant("10.0.0.9:7443", "n1", false, 5)));
        assertEquals("10.0.0.9:7443", d.holders().get("n1"));
        assertTrue(d.refused().get("10.0.0.2:7443").contains("not answering now"));
    }

    @Test
    void newClaimantsGoByFirstClaimThenAddress() {
        var first = Claims.decide(Map.of(), List.of(new Claimant("b:1", "n1", true, 5), new Claimant("a:1", "n1", true, 7)));
        assertEquals("b:1", first.holders().get("n1"));
        var tie = Claims.decide(Map.of(), List.of(new Claimant("b:1", "n1", true, 5), new Claimant("a:1", "n1", true, 5)));
        assertEquals("a:1", tie.holders().get("n1"));
    }

    @Test
    void distinctNodesDoNotInterfere() {
        var d = Claims.decide(Map.of(), List.of(new Claimant("a:1", "n1", true, 1), new Claimant("b:1", "n2", false, 1)));
        assertEquals(Map.of("n1", "a:1", "n2", "b:1"), d.holders());
        assertTrue(d.refused().isEmpty());
    }
}
