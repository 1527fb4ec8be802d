package io.csi4j.driver.engine;

import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The capabilities one engine offers, by the interface each implements: an immutable map from the capability's type
 * to the instance, filled once when the engine is opened. Lookup is a map read and a {@link Class#cast}.
 */
public final class Capabilities {
    private final Map<Class<? extends Capability>, Capability> offered;

    private Capabilities(Map<Class<? extends Capability>, Capability> offered) {
        this.offered = Map.copyOf(offered);
    }

    public static Capabilities none() {
        return new Capabilities(Map.of());
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The instance registered under {@code type}; empty when the engine does not offer it. */
    public <C extends Capability> Optional<C> find(Class<C> type) {
        return Optional.ofNullable(offered.get(type)).map(type::cast);
    }

    /** Collects capabilities; the type is the interface a caller asks for, so one instance may be registered under several. */
    public static final class Builder {
        private final Map<Class<? extends Capability>, Capability> offered = new HashMap<>();

        private Builder() {}

        public <C extends Capability> Builder add(Class<C> type, C instance) {
            Objects.requireNonNull(instance, type.getSimpleName());
            if (offered.putIfAbsent(type, instance) != null) {
                throw new IllegalStateException(type.getSimpleName() + " is registered twice");
            }
            return this;
        }

        public Capabilities build() {
            return new Capabilities(offered);
        }
    }
}
