package dev.toolcert.sdks;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;

/** {@code java -jar toolcert-java-sdks.jar --sdk NAME [--policy as-handed-over|documented]}. */
public final class Main {
    private Main() {}

    public static void main(String[] args) throws Exception {
        Map<String, Supplier<SdkAdapter>> sdks = new LinkedHashMap<>();
        sdks.put("openai-java", OpenAiJava::new);
        sdks.put("anthropic-java", AnthropicJava::new);
        sdks.put("langchain4j", LangChain4j::new);
        System.exit(Harness.main(args, sdks));
    }
}
