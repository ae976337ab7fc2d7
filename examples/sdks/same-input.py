#!/usr/bin/env python3
"""Every adapter of one dialect handles the same input the same way.

Feeds every SDK adapter that speaks DIALECT (Python, Node and, where built, Rust, Go and Java) the same few
cases, under each caller policy, and compares their verdicts case by case. The cases are the
ones where an adapter, not the SDK, decides the outcome: a truncated turn (the stop reason
says the output was cut), an abandoned turn (the body ends mid-arguments, no stop reason), a
call with empty arguments (no argument bytes: `{}`, docs/SPEC.md section 2), and a complete
turn as the control. Each is a scenario file handed to `toolcert certify --scenario`.

Expectations, per policy, from docs/CERTIFICATION.md ("Caller policies"):
  documented      nothing of the truncated or abandoned turn is dispatched, so every adapter
                  passes ACC-TRUNCATION and ACC-ABANDON at the must grade on them;
  as-handed-over  adapters of one dialect agree with each other unless their SDKs hand over
                  different things (then `KNOWN` below names the SDK behaviour);
  both            empty arguments and the complete turn conform, no SUBJECT-CRASH anywhere.

    TOOLCERT=target/release/toolcert examples/sdks/same-input.py openai-chat [--only SUBSTR]

SAME_INPUT_SKIP: subject names (comma-separated) to leave out, e.g. `python-pydantic-ai`, whose
process takes seconds to start per scenario (the CI scripts leave it out by default).

Exit status: 0 when every adapter meets the expectations, 1 when one does not (the table
says which), 2 on a usage error or a missing toolcert binary.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
POLICIES = ("as-handed-over", "documented")
PY = "examples/sdks/python/.venv/bin/python"
JAVA = "java -jar examples/sdks/java/sdks/target/toolcert-java-sdks.jar"
SPRING_AI = "java -jar examples/sdks/java/spring-ai/target/toolcert-spring-ai.jar"
TIMEOUT = os.environ.get("TIMEOUT", "180")

# (subject name, dialect, command) of every SDK adapter; the policy is passed as an argument.
ADAPTERS = [
    ("python-anthropic", "anthropic", f"{PY} examples/sdks/python/anthropic_sdk.py"),
    ("node-anthropic", "anthropic", "node examples/sdks/node/anthropic.mjs"),
    ("node-vercel-ai", "anthropic", "node examples/sdks/node/vercel-ai.mjs"),
    ("rust-genai", "anthropic", "examples/sdks/rust/target/release/toolcert-genai"),
    ("python-openai", "openai-chat", f"{PY} examples/sdks/python/openai_chat.py"),
    ("python-langchain-openai", "openai-chat", f"{PY} examples/sdks/python/langchain_openai_sdk.py"),
    ("python-litellm", "openai-chat", f"{PY} examples/sdks/python/litellm_sdk.py"),
    ("node-openai", "openai-chat", "node examples/sdks/node/openai-chat.mjs"),
    ("node-vercel-ai", "openai-chat", "node examples/sdks/node/vercel-ai.mjs"),
    ("rust-genai", "openai-chat", "examples/sdks/rust/target/release/toolcert-genai"),
    ("python-openai", "openai-responses", f"{PY} examples/sdks/python/openai_responses.py"),
    ("node-openai", "openai-responses", "node examples/sdks/node/openai-responses.mjs"),
    ("node-vercel-ai", "openai-responses", "node examples/sdks/node/vercel-ai.mjs"),
    ("rust-genai", "openai-responses", "examples/sdks/rust/target/release/toolcert-genai"),
    ("python-pydantic-ai", "anthropic", f"{PY} examples/sdks/python/pydantic_ai_sdk.py --dialect anthropic"),
    ("python-pydantic-ai", "openai-chat", f"{PY} examples/sdks/python/pydantic_ai_sdk.py --dialect openai-chat"),
    ("python-pydantic-ai", "openai-responses",
     f"{PY} examples/sdks/python/pydantic_ai_sdk.py --dialect openai-responses"),
    ("rust-rig", "anthropic", "examples/sdks/rust/target/release/toolcert-rig"),
    ("rust-rig", "openai-chat", "examples/sdks/rust/target/release/toolcert-rig"),
    ("rust-rig", "openai-responses", "examples/sdks/rust/target/release/toolcert-rig"),
    ("rust-async-openai", "openai-chat", "examples/sdks/rust/target/release/toolcert-async-openai"),
    ("go-anthropic-sdk-go", "anthropic", "examples/sdks/go/bin/anthropic-go"),
    ("go-openai-go", "openai-chat", "examples/sdks/go/bin/openai-go-chat"),
    ("go-go-openai", "openai-chat", "examples/sdks/go/bin/go-openai-chat"),
    ("go-openai-go", "openai-responses", "examples/sdks/go/bin/openai-go-responses"),
    ("go-go-openai", "openai-responses", "examples/sdks/go/bin/go-openai-responses"),
    ("java-openai-java", "openai-chat", f"{JAVA} --sdk openai-java"),
    ("java-openai-java", "openai-responses", f"{JAVA} --sdk openai-java"),
    ("java-anthropic-java", "anthropic", f"{JAVA} --sdk anthropic-java"),
    ("java-langchain4j", "openai-chat", f"{JAVA} --sdk langchain4j"),
    # LangChain4j's Anthropic and Responses models hang on a stream that ends without its terminal
    # event (examples/sdks/java/README.md), which the abandoned cases here are: left out.
    ("java-spring-ai", "openai-chat", f"{SPRING_AI} --sdk spring-ai"),
    ("java-spring-ai", "anthropic", f"{SPRING_AI} --sdk spring-ai"),
]

# Differences between adapters of one dialect that come from the SDKs (as handed over), each
# with the SDK behaviour that explains it: (dialect, policy, case) -> (reason, the must-grade
# verdict of each adapter that does not conform at must). Every other adapter of the dialect
# must conform at must there; a verdict that moves (an SDK fixed, an adapter changed) fails
# the check. Seen with the pinned versions, on every run here.
TRUNCATION = "ACC-TRUNCATION must"
ABANDON = "ACC-ABANDON must"
KNOWN: dict[tuple[str, str, str], tuple[str, dict[str, str]]] = {
    ("anthropic", "as-handed-over", "truncated"): (
        "the Anthropic SDKs hand a max_tokens turn's tool_use blocks over (anthropic and @anthropic-ai/sdk "
        "raise nothing); streamText does not run them; genai hands them over, and so does pydantic-ai "
        "(StreamedResponse.get() keeps the ToolCallParts; only its finish_reason says length), and "
        "rig-core (Streamed::finish() keeps the calls; only finish_reason() says Length), and anthropic-sdk-go "
        "(Message.Accumulate keeps the blocks; only StopReason says max_tokens); so do anthropic-java's "
        "MessageAccumulator and Spring AI's AnthropicChatModel (only stop_reason says max_tokens)",
        {"python-anthropic": TRUNCATION, "node-anthropic": TRUNCATION, "rust-genai": TRUNCATION,
         "python-pydantic-ai": TRUNCATION, "rust-rig": TRUNCATION, "go-anthropic-sdk-go": TRUNCATION,
         "java-anthropic-java": TRUNCATION, "java-spring-ai": TRUNCATION}),
    ("anthropic", "as-handed-over", "truncated-parses"): (
        "as truncated: the prefix parses, so nothing but the stop reason says the call was cut",
        {"python-anthropic": TRUNCATION, "node-anthropic": TRUNCATION, "rust-genai": TRUNCATION,
         "python-pydantic-ai": TRUNCATION, "rust-rig": TRUNCATION, "go-anthropic-sdk-go": TRUNCATION,
         "java-anthropic-java": TRUNCATION, "java-spring-ai": TRUNCATION}),
    ("anthropic", "as-handed-over", "abandoned"): (
        "anthropic (Python) get_final_message() hands over the live block of a stream without message_stop "
        "(input {}); @anthropic-ai/sdk raises; streamText runs nothing",
        {"python-anthropic": ABANDON}),
    ("openai-chat", "as-handed-over", "truncated"): (
        "openai (Python)'s stream helper raises LengthFinishReasonError on finish_reason length "
        "(openai/lib/_parsing/_completions.py) and streamText does not run the tools of a length turn; "
        "langchain-openai, litellm, openai (Node), genai and pydantic-ai (whose OpenAIChatModel streams "
        "with the plain client, not the helper) and rig-core hand the calls over with no error; "
        "async-openai's example pattern runs them only on finish_reason tool_calls (its documented "
        "column), so as handed over it runs what it accumulated; openai-go's ChatCompletionAccumulator and "
        "go-openai's stream (gathered as OpenAI's guide shows) hand the calls over with no error, and so do "
        "openai-java's ChatCompletionAccumulator, LangChain4j's OpenAiStreamingChatModel and Spring AI's OpenAiChatModel",
        {"python-langchain-openai": TRUNCATION, "python-litellm": TRUNCATION, "node-openai": TRUNCATION,
         "rust-genai": TRUNCATION, "python-pydantic-ai": TRUNCATION, "rust-rig": TRUNCATION,
         "rust-async-openai": TRUNCATION, "go-openai-go": TRUNCATION, "go-go-openai": TRUNCATION,
         "java-openai-java": TRUNCATION, "java-langchain4j": TRUNCATION, "java-spring-ai": TRUNCATION}),
    ("openai-chat", "as-handed-over", "truncated-parses"): (
        "as truncated: the prefix parses, so nothing but finish_reason says the call was cut",
        {"python-langchain-openai": TRUNCATION, "python-litellm": TRUNCATION, "node-openai": TRUNCATION,
         "rust-genai": TRUNCATION, "python-pydantic-ai": TRUNCATION, "rust-rig": TRUNCATION,
         "rust-async-openai": TRUNCATION, "go-openai-go": TRUNCATION, "go-go-openai": TRUNCATION,
         "java-openai-java": TRUNCATION, "java-langchain4j": TRUNCATION, "java-spring-ai": TRUNCATION}),
    ("openai-chat", "as-handed-over", "abandoned"): (
        "langchain-openai parses the argument text of a stream that ended with no finish_reason with "
        "parse_partial_json and hands over the call ({\"order_id\": \"A-44\"}); openai (Python) hands the "
        "unparseable text over, litellm and openai (Node) raise, streamText runs nothing",
        {"python-langchain-openai": ABANDON}),
    ("openai-responses", "as-handed-over", "truncated"): (
        "openai (Node) 6.49 resolves finalResponse() with a response.incomplete response whose "
        "function_call item says completed, and no error; openai (Python) raises (\"Didn't receive a "
        "`response.completed` event\"); streamText does not run the tools of a cut turn; pydantic-ai "
        "hands the completed function_call item over (only its finish_reason says length), and so does "
        "rig-core; openai-go and go-openai have no accumulator: the caller's final result is the "
        "response.incomplete event's response, whose function_call item says completed; openai-java's "
        "ResponseAccumulator hands over that snapshot too",
        {"node-openai": TRUNCATION, "rust-genai": TRUNCATION, "python-pydantic-ai": TRUNCATION,
         "rust-rig": TRUNCATION, "go-openai-go": TRUNCATION, "go-go-openai": TRUNCATION,
         "java-openai-java": TRUNCATION}),
    ("openai-responses", "as-handed-over", "truncated-parses"): (
        "as truncated",
        {"node-openai": TRUNCATION, "rust-genai": TRUNCATION, "python-pydantic-ai": TRUNCATION,
         "rust-rig": TRUNCATION, "go-openai-go": TRUNCATION, "go-go-openai": TRUNCATION,
         "java-openai-java": TRUNCATION}),
}

STOPS = {
    "anthropic": ("tool_use", "max_tokens"),
    "openai-chat": ("tool_calls", "length"),
    "openai-responses": ("completed", "incomplete"),
}


def scenarios(dialect: str) -> dict[str, dict]:
    """The cases, as scenario files: one stream, one call to `lookup_order`."""
    complete, cut = STOPS[dialect]
    shape = {"interleaved": {"order": [], "joins": []}} if dialect == "openai-chat" else "per_call"
    args = '{"order_id": "A-4471", "include_line_items": true}'

    def turn(arguments: str, ending, splits=(18, 40)):
        call = {"index": 0, "call_id": "call_same0001", "name": "lookup_order",
                "arguments": arguments, "splits": [s for s in splits if s < len(arguments)]}
        return {"tools": [{"name": "lookup_order"}], "blocks": [{"call": call}], "shape": shape,
                "ending": ending, "faults": [], "pings": []}

    def case(name, t):
        return {"name": f"same-input/{name}", "streams": [t], "schedule": "sequential"}

    return {
        "complete": case("complete", turn(args, {"stop": complete})),
        "truncated": case("truncated", turn(args, {"stop": cut})),
        # The cut lands right after a closing brace: the prefix parses, and still must not run.
        "truncated-parses": case("truncated-parses", turn('{"limit": 20}', {"stop": cut}, ())),
        "abandoned": case("abandoned", turn(args, {"abandoned": {"after": 2, "end": "eof"}})),
        "disconnected": case("disconnected", turn(args, {"abandoned": {"after": 2, "end": "disconnect"}})),
        "empty-arguments": case("empty-arguments", turn("", {"stop": complete}, ())),
    }


def handed(observation: dict) -> str:
    """What the caller got from the stream: each call's outcome, or the turn error."""
    if observation.get("crash"):
        return f"crash: {str(observation['crash'])[:300]}"
    if observation.get("error"):
        return f"error {observation['error'].get('class')}"
    got = []
    for o in observation.get("outcomes", []):
        kind = o.get("outcome")
        got.append(f"failed({o.get('reason')})" if kind == "failed" else
                   f"{kind} {json.dumps(o.get('args'), separators=(',', ':'))}")
    return " + ".join(got) or "nothing"


def verdict(toolcert: str, command: str, policy: str, dialect: str, path: str) -> tuple[str, list[str], str]:
    """The case's status, its violations (`INVARIANT grade`) and what the caller got, or
    `error` and the reason."""
    # A generous timeout: an SDK that imports for seconds (litellm) on a loaded machine is not
    # an adapter that hangs.
    cmd = [toolcert, "certify", "--subject", f"exec:{command} --policy {policy}", "--level", "bytes",
           "--dialect", dialect, "--no-schema", "--scenario", path, "--format", "jsonl", "--timeout", TIMEOUT]
    run = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if run.returncode not in (0, 1):
        return "error", [f"exit {run.returncode}: {run.stderr.strip()[-300:]}"], ""
    for line in filter(None, run.stdout.split("\n")):  # JSONL: U+2028 is no line end
        record = json.loads(line)
        if "case" in record and "violations" in record:
            found = sorted({f"{v['invariant']} {v['grade']}" for v in record["violations"]})
            got = "; ".join(handed(o) for o in record.get("observations", []))
            return ("fail" if found else "pass"), found, got
    return "error", ["no case record in the report"], ""


def expected_problem(policy: str, name: str, status: str, found: list[str]) -> str | None:
    """What breaks the policy's expectation (None when it holds)."""
    if status == "error":
        return "could not be judged"
    if any(f.startswith("SUBJECT-CRASH") for f in found):
        return "the adapter crashed"
    if name in ("complete", "empty-arguments") and status != "pass":
        return "a well-formed complete turn must conform"
    if policy == "documented" and name.startswith(("truncated", "abandoned", "disconnected")):
        bad = [f for f in found if f in ("ACC-TRUNCATION must", "ACC-ABANDON must")]
        if bad:
            return "a documented caller dispatched a call of an unfinished turn"
    return None


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in STOPS:
        print(f"usage: same-input.py DIALECT [--only SUBSTR]  (DIALECT: {', '.join(STOPS)})", file=sys.stderr)
        return 2
    dialect = argv[0]
    only = argv[argv.index("--only") + 1] if "--only" in argv else ""
    toolcert = os.environ.get("TOOLCERT", "target/release/toolcert")
    if not os.access(os.path.join(ROOT, toolcert), os.X_OK):
        print(f"same-input.py: no toolcert binary at {toolcert} (cargo build --release, or set TOOLCERT)",
              file=sys.stderr)
        return 2
    # An adapter whose environment is not installed here (no venv, no node_modules, the Rust
    # subject not built) is left out, and the summary says how many ran.
    def installed(command: str) -> bool:
        parts = command.split()
        script = next((p for p in parts if p.endswith((".py", ".mjs"))), parts[-1])
        need = {PY: [PY, script], "node": ["examples/sdks/node/node_modules", script],
                "java": parts[2:3]}.get(parts[0], [parts[0]])
        return all(os.path.exists(os.path.join(ROOT, p)) for p in need)

    skip = {s.strip() for s in os.environ.get("SAME_INPUT_SKIP", "").split(",") if s.strip()}
    adapters = [(n, c) for n, d, c in ADAPTERS
                if d == dialect and only in n and n not in skip and installed(c)]
    cases = scenarios(dialect)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for name, scenario in cases.items():
            paths[name] = os.path.join(tmp, f"{name}.json")
            with open(paths[name], "w") as f:
                json.dump(scenario, f)
        for policy in POLICIES:
            table: dict[str, dict[str, str]] = {}
            musts: dict[str, dict[str, str]] = {}
            for subject, command in adapters:
                row = table.setdefault(subject, {})
                must = musts.setdefault(subject, {})
                for name, path in paths.items():
                    status, found, got = verdict(toolcert, command, policy, dialect, path)
                    row[name] = (status if not found else f"{status}: {', '.join(found)}") + f"  <- {got}"
                    must[name] = ", ".join(f for f in found if f.endswith(" must")) or "conforms at must"
                    problem = expected_problem(policy, name, status, found)
                    if problem:
                        failures += 1
                        print(f"FAIL {dialect} {policy} {subject} {name}: {problem} ({row[name]})")
                    print(f"  {policy:15} {subject:24} {name:17} {row[name]}", flush=True)
            # Adapters of one dialect against each other: the same must-grade verdict on the
            # same input, unless KNOWN names the SDK behaviour that differs and each adapter's
            # verdict there. (Should-grade differences, such as which error class an SDK
            # raises, are the SDKs' own.)
            for name in paths:
                seen = {s: r[name] for s, r in musts.items()}
                reason, expected = KNOWN.get((dialect, policy, name), (None, {}))
                moved = {s: v for s, v in seen.items() if v != expected.get(s, "conforms at must")}
                if len(set(seen.values())) > 1 or expected:
                    print(f"DIFF {dialect} {policy} {name}: " + "; ".join(f"{s} = {v}" for s, v in seen.items())
                          + (f" (known: {reason})" if reason and not moved else ""))
                for s, v in moved.items():
                    failures += 1
                    print(f"FAIL {dialect} {policy} {s} {name}: {v}, expected "
                          f"{expected.get(s, 'conforms at must')}"
                          + (f" (known: {reason})" if reason else " (no known SDK behaviour explains it)"))
    print(f"same input, {dialect}: {len(adapters)} adapters x {len(POLICIES)} policies x {len(cases)} cases, "
          f"{failures} problems")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
