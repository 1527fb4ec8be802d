package io.csi4j.testkit.suite;

import java.util.Objects;

/** One conformance test: its name ("Service/Rpc/behaviour"), what it needs, and what it does. */
public record SanityTest(String name, Requirement requirement, Body body) {

    @FunctionalInterface
    public interface Body {
        void run(TestContext ctx) throws Exception;
    }

    public SanityTest {
        Objects.requireNonNull(name);
        Objects.requireNonNull(requirement);
        Objects.requireNonNull(body);
    }

    /** The first segment of the name: Identity, Controller, Node, GroupController, Lifecycle, VolumeGroup ... */
    public String group() {
        int slash = name.indexOf('/');
        return slash < 0 ? name : name.substring(0, slash);
    }
}
