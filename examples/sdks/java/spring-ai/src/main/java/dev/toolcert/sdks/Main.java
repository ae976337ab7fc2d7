package dev.toolcert.sdks;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;

/** {@code java -jar toolcert-spring-ai.jar --sdk spring-ai [--policy as-handed-over|documented]}. */
public final class Main {
    private Main() {}

    public static void main(String[] args) throws Exception {
        Map<String, Supplier<SdkAdapter>> sdks = new LinkedHashMap<>();
        sdks.put("spring-ai", SpringAi::new);
        System.exit(Harness.main(args, sdks));
    }
}
