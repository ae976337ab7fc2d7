#!/usr/bin/env bash
# Builds the Java SDK adapters with the pinned SDKs (pom.xml): installs the toolcert-adapter package
# (java/) into the local Maven repository, then builds the two fat jars:
#   sdks/target/toolcert-java-sdks.jar       --sdk openai-java | anthropic-java | langchain4j
#   spring-ai/target/toolcert-spring-ai.jar  --sdk spring-ai
# Needs a JDK >= 17 and Maven; the first run downloads the SDKs from Maven Central, later runs read ~/.m2.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
java -version 2>&1 | sed -n 1p
(cd "$root/java" && mvn -q -B install -DskipTests)
(cd "$here" && mvn -q -B install -DskipTests)
for jar in sdks/target/toolcert-java-sdks.jar spring-ai/target/toolcert-spring-ai.jar; do
    [ -f "$here/$jar" ] || { echo "install.sh: $jar was not built" >&2; exit 1; }
    echo "built examples/sdks/java/$jar"
done
grep -h '^[a-z]' "$here"/sdks/target/classes/dev/toolcert/sdks/versions.properties \
    "$here"/spring-ai/target/classes/dev/toolcert/sdks/versions.properties | sed 's/\\//g'
