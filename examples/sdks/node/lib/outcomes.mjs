// Outcomes from what an SDK hands its caller.

import { present, tryStrictParse } from "./json.mjs";

/**
 * The SDK handed the call's argument text (a string it leaves to the caller to parse, as
 * the openai SDK does). The caller parses it strictly: one JSON document is offered for
 * dispatch with exactly its values; anything else cannot be run (`failed`, `unparseable`,
 * with the text as handed). An empty text means no arguments (`{}`), as providers send for
 * tools without parameters.
 */
export function fromText(call_id, name, text) {
  // raw_text: kept for the documented policy (lib/harness.mjs), never sent.
  if (text === "") return { outcome: "dispatchable", call_id, name, args: new Map(), raw_text: "" };
  const parsed = tryStrictParse(text);
  if (parsed === undefined) return { outcome: "failed", reason: "unparseable", call_id, name, raw: String(text) };
  return { outcome: "dispatchable", call_id, name, args: parsed, raw_text: String(text) };
}

/**
 * The SDK handed a parsed value (its own JSON.parse, or a partial parser's completion).
 * Reported as it is; `raw` is the SDK's own argument text, when it keeps one, used only to
 * write numbers as the model wrote them where the SDK holds exactly their double (json.mjs).
 */
export function fromValue(call_id, name, value, raw) {
  const out = { outcome: "dispatchable", call_id, name, args: present(value, tryStrictParse(raw)) };
  if (typeof raw === "string") out.raw_text = raw;
  return out;
}

export function failed(reason, call_id, name, raw) {
  return { outcome: "failed", reason, call_id, name, raw: typeof raw === "string" ? raw.toWellFormed() : String(raw) };
}
