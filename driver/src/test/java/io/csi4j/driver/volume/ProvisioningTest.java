package io.csi4j.driver.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.engine.MemoryPool;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The StorageClass parameter csi4j.io/provisioning: what each value means, and what is refused. */
class ProvisioningTest {

    static Stream<Arguments> values() {
        return Stream.of(
                Arguments.of(null, Provisioning.THIN),          // absent: thin, as before the parameter existed
                Arguments.of("thin", Provisioning.THIN),
                Arguments.of("thick", Provisioning.THICK),
                Arguments.of("Thick", null),                    // exact: the StorageClass says what it means
                Arguments.of("THIN", null),
                Arguments.of("", null),
                Arguments.of(" thick", null),
                Arguments.of("eager", null),
                Arguments.of("preallocated", null));
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @MethodSource("values")
    void parses(String value, Provisioning expected) {
        Map<String, String> parameters = new HashMap<>(Map.of("csi.storage.k8s.io/pvc/name", "data"));
        if (value != null) parameters.put(Provisioning.PARAMETER, value);
        if (expected == null) {
            DomainException e = assertThrows(DomainException.class, () -> Provisioning.of(parameters));
            assertEquals(DomainException.Kind.INVALID, e.kind());
            assertTrue(e.getMessage().contains(Provisioning.PARAMETER), e.getMessage());
        } else {
            assertEquals(expected, Provisioning.of(parameters));
        }
    }

    @ParameterizedTest(name = "{0} on an engine without preallocation")
    @MethodSource("values")
    void onlyThickNeedsTheCapability(String value, Provisioning expected) {
        Map<String, String> parameters = value == null ? Map.of() : Map.of(Provisioning.PARAMETER, value);
        MemoryPool engine = new MemoryPool(1L << 30);   // offers no capability, as the dir engine offers no preallocation
        if (expected == Provisioning.THIN) {
            assertTrue(Provisioning.of(parameters, engine).isEmpty());
        } else {
            DomainException e = assertThrows(DomainException.class, () -> Provisioning.of(parameters, engine));
            assertEquals(DomainException.Kind.INVALID, e.kind());
        }
    }
}
