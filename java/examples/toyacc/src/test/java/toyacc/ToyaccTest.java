package toyacc;

import dev.toolcert.adapter.Toolcert;
import dev.toolcert.adapter.junit.ToolcertTests;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/** Certifies toyacc with toolcert from JUnit: one test per invariant. */
class ToyaccTest {
    @TestFactory
    Stream<DynamicTest> toyacc() {
        String flags = System.getenv().getOrDefault("TOYACC_FLAGS", "");
        int cases = Integer.parseInt(System.getenv().getOrDefault("CASES", "300"));
        return ToolcertTests.certifyTests(Toolcert.javaCommand("toyacc.Adapter", flags),
                Toolcert.options().cases(cases).schema(false));
    }
}
