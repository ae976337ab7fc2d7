#!/usr/bin/env python3
"""toolcert adapter for the Anthropic Python SDK's tool runner
(`client.beta.messages.tool_runner(..., stream=True)`): an agent layer that runs the tools
itself, so the dispatches are the executions of a recording tool.

What it drives, per stream: a streaming tool runner on a client whose HTTP transport answers
the first request with the stream's exact chunks. Each tool of the stream is a
`BetaFunctionTool` with its name and schema, bound to one recording function. The runner
streams the model's turn, runs the tool calls it accepts, and sends their results back: that
request (and any later one) is answered with a small complete text turn ("ok"), so the run
ends. The results the runner sent back say which `tool_use` id each execution belonged to
(the recording function returns a token the result carries) and which calls it refused
(`is_error` results).

What it reports:
- each execution of the recording tool: `dispatchable` with the input it received, under the
  call id of the `tool_result` that carried its token back;
- each call the runner answered with an `is_error` result without running it:
  `failed(unparseable)` (the runner refused it and told the model);
- a call neither run nor answered: no outcome.
- an exception out of the runner is a turn error (`upstream` for status errors, `incomplete`
  when the body ended early, `malformed` for undecodable data, `other` otherwise); calls it ran
  before raising stay dispatched: they ran.
Text: the text of the first turn, as its stream showed it.

Only the `as-handed-over` caller policy exists here: the runner runs the tools itself, so no
check is left for a caller (`--policy documented` is refused).

    toolcert certify --subject 'exec:examples/sdks/python/.venv/bin/python examples/sdks/python/anthropic_tool_runner.py' \\
        --level bytes --dialect anthropic --no-schema
"""

from __future__ import annotations

import json
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the adapters
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from sdk_harness import (  # noqa: E402
    SSE_HEADERS,
    FeedSlot,
    FollowUpSlot,
    Outcome,
    SdkAdapter,
    SdkCall,
    classify_common,
    dispatch,
    exception_chain,
    main,
    unparseable,
)


class AnthropicToolRunnerAdapter(SdkAdapter):
    name = "anthropic-python-tool-runner"
    dialects = ("anthropic",)
    sdk_package = "anthropic"
    homepage = "https://pypi.org/project/anthropic/"
    preload_modules = ("anthropic",)
    policy_doc = "https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use"

    def make_slot(self) -> FeedSlot:
        return FollowUpSlot()

    def setup(self, slot) -> None:
        import anthropic
        import httpx2

        def handler(request):
            feed = slot.take(request)
            return httpx2.Response(200, headers=SSE_HEADERS, content=feed.body(), request=request)

        self.anthropic = anthropic
        self.client = anthropic.Anthropic(api_key="toolcert-dummy", max_retries=0,
                                          http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))

    def classify(self, e: BaseException) -> str:
        for x in exception_chain(e):
            if isinstance(x, self.anthropic.APIStatusError):
                return "upstream"
        return classify_common(e)

    def run(self, slot, feed, tools, dialect) -> Outcome:
        from anthropic.lib.tools import BetaFunctionTool

        slot.start_run("anthropic")
        ran: list[tuple[str, dict]] = []  # (name, input), token = position

        def recorder(name: str):
            def run_tool(**tool_input):
                ran.append((name, tool_input))
                return f"toolcert-ran-{len(ran) - 1}"
            return run_tool

        runnable = [
            BetaFunctionTool(recorder(t["name"]), name=t["name"], description=f"toolcert tool {t['name']}",
                             input_schema=t["schema"] if isinstance(t.get("schema"), dict) else {"type": "object"})
            for t in tools
        ]
        out = Outcome()
        shown: list[str] = []
        names = {}
        with SdkCall(self, out, shown):
            runner = self.client.beta.messages.tool_runner(
                model="claude-sonnet-4-5",
                max_tokens=4096,
                messages=[{"role": "user", "content": "toolcert"}],
                tools=runnable,
                stream=True,
                max_iterations=3,
            )
            names: dict[str, str] = {}
            for turn, stream in enumerate(runner):
                for event in stream:
                    if turn == 0 and event.type == "text":
                        shown.append(event.text)
                if turn == 0:
                    names = {b.id: b.name for b in stream.get_final_message().content if b.type == "tool_use"}
        # Which tool_use id each execution belonged to, and which calls were refused: from the
        # tool_result blocks the runner sent back.
        owner: dict[int, str] = {}
        refused: list[str] = []
        for body in slot.sent_back:
            try:
                request = json.loads(body)
            except ValueError:
                continue
            for message in request.get("messages", []):
                content = message.get("content")
                if message.get("role") != "user" or not isinstance(content, list):
                    continue
                for block in content:
                    if not isinstance(block, dict) or block.get("type") != "tool_result":
                        continue
                    text = json.dumps(block.get("content"))
                    token = next((int(w[len("toolcert-ran-"):]) for w in _words(text)
                                  if w.startswith("toolcert-ran-") and w[len("toolcert-ran-"):].isdigit()), None)
                    if token is not None:
                        owner.setdefault(token, block.get("tool_use_id"))
                    elif block.get("is_error") and block.get("tool_use_id") not in refused:
                        refused.append(block.get("tool_use_id"))
        for k, (name, tool_input) in enumerate(ran):
            out.calls.append(dispatch(owner.get(k, ""), name, tool_input))
        if out.error is None:
            for call_id in refused:
                out.calls.append(unparseable(call_id, names.get(call_id, ""), ""))
            out.text = "".join(shown)
            # The runner ran what it ran: no stop check is left to the caller.
            out.stop = "complete"
        return out


def _words(text: str):
    for w in text.replace('"', " ").replace("\\", " ").split():
        yield w.strip(".,:;")


if __name__ == "__main__":
    if "--policy" in sys.argv and "as-handed-over" not in sys.argv:
        print("anthropic-python-tool-runner: the runner runs the tools itself; only --policy as-handed-over exists",
              file=sys.stderr)
        sys.exit(2)
    sys.exit(main(AnthropicToolRunnerAdapter()))
