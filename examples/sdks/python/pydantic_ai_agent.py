#!/usr/bin/env python3
"""toolcert adapter for pydantic-ai's `Agent`: an agent layer that runs the tools itself, so
the dispatches are the executions of a recording tool, not what a caller reads off a message.

What it drives, per stream: `Agent.run(...)` with an `event_stream_handler` (so the agent
streams its model request) on the dialect's pydantic-ai model (see pydantic_ai_sdk.py), whose
async client's HTTP transport answers the first request with the stream's exact chunks. Each
tool of the stream is registered as `Tool.from_schema` with its name and schema, bound to one
recording function. The agent decides which calls to run, validates their arguments, runs
them (the recording function notes call id, name and arguments), then sends the results back
to the model: that request, and any retry prompt the agent sends, is answered with a small
complete text turn ("ok"), so the run ends.

What it reports:
- each execution of the recording tool: `dispatchable` with the arguments the tool received;
- each call the agent refused to run and told the model so (a `RetryPromptPart` for that
  call id in the run's messages): `failed(unparseable)` with the arguments as the model
  wrote them;
- a call neither run nor refused: no outcome (the agent dropped it without a word).
- an exception out of `Agent.run` is a turn error (`incomplete` when the body ended early,
  `truncated` for pydantic-ai's `IncompleteToolCall`, `upstream` for HTTP status errors,
  `malformed` for undecodable data, `other` otherwise); calls the agent ran before raising
  stay dispatched: they ran.
Text: the text deltas of the first model response, as the event stream showed them.

Only the `as-handed-over` caller policy exists here: the agent runs the tools itself, so there
is no check left for a caller to make before running them (`--policy documented` is refused).

    toolcert certify --subject 'exec:examples/sdks/python/.venv/bin/python examples/sdks/python/pydantic_ai_agent.py --dialect anthropic' \\
        --level bytes --dialect anthropic --no-schema
"""

from __future__ import annotations

import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the adapters
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from sdk_harness import (  # noqa: E402
    FeedSlot,
    FollowUpSlot,
    Outcome,
    SdkCall,
    classify_common,
    dispatch,
    ended_early,
    exception_chain,
    main,
    unparseable,
)
from pydantic_ai_sdk import PydanticAIAdapter  # noqa: E402


class PydanticAIAgentAdapter(PydanticAIAdapter):
    name = "pydantic-ai-agent"
    policy_doc = "https://ai.pydantic.dev/tools/"

    def classify(self, e: BaseException) -> str:
        chain = list(exception_chain(e))
        if ended_early(chain):
            return "incomplete"
        for x in chain:
            if isinstance(x, self.exceptions.IncompleteToolCall):
                return "truncated"
        return super().classify(e)

    def make_slot(self) -> FeedSlot:
        return FollowUpSlot()

    async def _run(self, dialect: str, tools: list[dict], shown: list[str], ran: list):
        from pydantic_ai import Agent, RunContext, Tool
        from pydantic_ai.messages import PartDeltaEvent, PartStartEvent, TextPart, TextPartDelta
        from pydantic_ai.toolsets import FunctionToolset

        first = [True]

        def recorder(name: str):
            def run_tool(ctx: RunContext, **args):
                ran.append((ctx.tool_call_id, name, args))
                return "done"
            return run_tool

        defs = [
            Tool.from_schema(
                recorder(t["name"]),
                name=t["name"],
                description=f"toolcert tool {t['name']}",
                json_schema=t["schema"] if isinstance(t.get("schema"), dict) else {"type": "object"},
                takes_ctx=True,
            )
            for t in tools
        ]

        async def on_events(ctx, events):
            showing = first[0]
            first[0] = False
            async for event in events:
                if not showing:
                    continue
                if isinstance(event, PartStartEvent) and isinstance(event.part, TextPart):
                    shown.append(event.part.content)
                elif isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
                    shown.append(event.delta.content_delta)

        agent = Agent(self.models[dialect], toolsets=[FunctionToolset(defs)])
        return await agent.run("toolcert", event_stream_handler=on_events)

    def run(self, slot, feed, tools, dialect) -> Outcome:
        from pydantic_ai.messages import ModelResponse, RetryPromptPart, ToolCallPart

        slot.start_run(dialect)
        out = Outcome()
        shown: list[str] = []
        ran: list = []
        result = None
        with SdkCall(self, out, shown):
            result = self.loop.run_until_complete(self._run(dialect, tools, shown, ran))
        messages = result.all_messages() if result is not None else []
        first = next((m for m in messages if isinstance(m, ModelResponse)), None)
        # The agent runs a response's calls concurrently: report them in the order the model
        # wrote them, not the order the threads happened to finish in.
        position = {p.tool_call_id: i for i, p in enumerate(first.parts if first is not None else [])
                    if isinstance(p, ToolCallPart)}
        ran.sort(key=lambda r: position.get(r[0], len(position)))
        for call_id, name, args in ran:
            out.calls.append(dispatch(call_id, name, args))
        if out.error is not None or result is None:
            return out
        # Calls of the first response the agent refused to run, and said so to the model.
        refused = {p.tool_call_id for m in messages for p in getattr(m, "parts", [])
                   if isinstance(p, RetryPromptPart) and p.tool_call_id}
        done = {c for c, _, _ in ran}
        for part in (first.parts if first is not None else []):
            if isinstance(part, ToolCallPart) and part.tool_call_id in refused - done:
                raw = part.args if isinstance(part.args, str) else ""
                out.calls.append(unparseable(part.tool_call_id, part.tool_name, raw))
        out.text = "".join(shown)
        # The agent ran what it ran: no stop check is left to the caller.
        out.stop = "complete"
        return out


if __name__ == "__main__":
    if "--policy" in sys.argv and "as-handed-over" not in sys.argv:
        print("pydantic-ai-agent: the agent runs the tools itself; only --policy as-handed-over exists",
              file=sys.stderr)
        sys.exit(2)
    adapter = PydanticAIAgentAdapter(sys.argv[1:])
    sys.exit(main(adapter, sys.argv[1:]))
