// Strict JSON (as strict as serde_json, the oracle's parser) that keeps each number's text,
// and the encoder the adapters reply with. Ported from examples/adapters/typescript/src/json.ts.
//
// The SDKs parse arguments with JSON.parse (or a partial parser on top of it), so the values
// they hand their callers hold every number as a double: `1.0` and `1` are the same value,
// `12345678901234567890` loses digits, `-0` prints as `0`. `present()` writes what the SDK
// handed over, with one (documented) courtesy: a JS number that is exactly the double of the
// number written at the same place in the SDK's own argument text is written as that text.
// TOOLCERT_JS_NUMBERS=1 turns the courtesy off (every number as JS prints it), to show the
// double-only finding on its own.

/** A JSON number: its text as written, and its value as a double. */
export class JsonNumber {
  constructor(text, value) {
    this.text = text;
    this.value = value;
  }
}

export class NotJson extends Error {}

/** The oracle parses documents up to 512 levels deep (docs/SPEC.md, "Generated space"), as
 * the toolcert-adapter package does: a caller's parser that stopped earlier would make the
 * adapter, not the SDK, refuse a valid deep document. */
const MAX_DEPTH = 513;
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;

class Parser {
  constructor(s) {
    this.s = s;
    this.i = 0;
  }
  fail(what) {
    throw new NotJson(`${what} at character ${this.i}`);
  }
  ws() {
    const s = this.s;
    let i = this.i;
    for (;;) {
      const c = s.charCodeAt(i);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) i++;
      else break;
    }
    this.i = i;
  }
  value(depth) {
    const c = this.s.charCodeAt(this.i);
    switch (c) {
      case 0x7b: {
        if (depth + 1 >= MAX_DEPTH) this.fail("nested too deeply");
        this.i++;
        const out = new Map();
        this.ws();
        if (this.s.charCodeAt(this.i) === 0x7d) {
          this.i++;
          return out;
        }
        for (;;) {
          if (this.s.charCodeAt(this.i) !== 0x22) this.fail("expected a key");
          const key = this.string();
          this.ws();
          if (this.s.charCodeAt(this.i) !== 0x3a) this.fail("expected `:`");
          this.i++;
          this.ws();
          out.set(key, this.value(depth + 1));
          this.ws();
          const next = this.s.charCodeAt(this.i++);
          if (next === 0x7d) return out;
          if (next !== 0x2c) this.fail("expected `,` or `}`");
          this.ws();
        }
      }
      case 0x5b: {
        if (depth + 1 >= MAX_DEPTH) this.fail("nested too deeply");
        this.i++;
        const out = [];
        this.ws();
        if (this.s.charCodeAt(this.i) === 0x5d) {
          this.i++;
          return out;
        }
        for (;;) {
          out.push(this.value(depth + 1));
          this.ws();
          const next = this.s.charCodeAt(this.i++);
          if (next === 0x5d) return out;
          if (next !== 0x2c) this.fail("expected `,` or `]`");
          this.ws();
        }
      }
      case 0x22:
        return this.string();
      case 0x74:
        return this.literal("true", true);
      case 0x66:
        return this.literal("false", false);
      case 0x6e:
        return this.literal("null", null);
      default:
        return this.number();
    }
  }
  literal(word, value) {
    if (!this.s.startsWith(word, this.i)) this.fail("expected a value");
    this.i += word.length;
    return value;
  }
  number() {
    NUMBER.lastIndex = this.i;
    const m = NUMBER.exec(this.s);
    if (m === null) this.fail("expected a value");
    const text = m[0];
    const value = Number(text);
    if (!Number.isFinite(value)) this.fail("number out of range");
    this.i += text.length;
    return new JsonNumber(text, value);
  }
  hex4() {
    const h = this.s.slice(this.i, this.i + 4);
    if (!/^[0-9a-fA-F]{4}$/.test(h)) this.fail("bad \\u escape");
    this.i += 4;
    return parseInt(h, 16);
  }
  string() {
    const s = this.s;
    this.i++;
    let out = "";
    let start = this.i;
    for (;;) {
      const c = s.charCodeAt(this.i);
      if (Number.isNaN(c)) this.fail("unterminated string");
      if (c === 0x22) {
        out += s.slice(start, this.i);
        this.i++;
        return out;
      }
      if (c < 0x20) this.fail("control character in a string");
      if (c >= 0xd800 && c <= 0xdfff) {
        const d = s.charCodeAt(this.i + 1);
        if (c > 0xdbff || !(d >= 0xdc00 && d <= 0xdfff)) this.fail("lone surrogate");
        this.i += 2;
        continue;
      }
      if (c !== 0x5c) {
        this.i++;
        continue;
      }
      out += s.slice(start, this.i);
      this.i++;
      const e = s.charCodeAt(this.i++);
      switch (e) {
        case 0x22: out += '"'; break;
        case 0x5c: out += "\\"; break;
        case 0x2f: out += "/"; break;
        case 0x62: out += "\b"; break;
        case 0x66: out += "\f"; break;
        case 0x6e: out += "\n"; break;
        case 0x72: out += "\r"; break;
        case 0x74: out += "\t"; break;
        case 0x75: {
          const u = this.hex4();
          if (u >= 0xdc00 && u <= 0xdfff) this.fail("lone trailing surrogate in a \\u escape");
          if (u >= 0xd800 && u <= 0xdbff) {
            if (s.charCodeAt(this.i) !== 0x5c || s.charCodeAt(this.i + 1) !== 0x75) {
              this.fail("lone leading surrogate in a \\u escape");
            }
            this.i += 2;
            const low = this.hex4();
            if (!(low >= 0xdc00 && low <= 0xdfff)) this.fail("lone leading surrogate in a \\u escape");
            out += String.fromCharCode(u, low);
          } else {
            out += String.fromCharCode(u);
          }
          break;
        }
        default:
          this.i--;
          this.fail("bad escape");
      }
      start = this.i;
    }
  }
}

/** Exactly one JSON document, as strictly as serde_json reads it; throws NotJson otherwise. */
export function strictParse(text) {
  const p = new Parser(text);
  p.ws();
  const value = p.value(0);
  p.ws();
  if (p.i !== text.length) p.fail("trailing characters");
  return value;
}

/** strictParse, or undefined when the text is not exactly one JSON document. */
export function tryStrictParse(text) {
  if (typeof text !== "string") return undefined;
  try {
    return strictParse(text);
  } catch {
    return undefined;
  }
}

/** A value that is exactly representable in a reply (raw JSON text, already encoded). */
export class Raw {
  constructor(text) {
    this.text = text;
  }
}

/** How JS prints a number, as JSON text serde_json reads back to the same double. */
function jsNumber(v) {
  if (!Number.isFinite(v)) return "null"; // JSON has no Infinity/NaN: JSON.stringify writes null too
  if (Object.is(v, -0)) return "-0.0";
  return JSON.stringify(v);
}

const EXACT_JS_NUMBERS = process.env.TOOLCERT_JS_NUMBERS === "1";

/**
 * The value an SDK handed its caller, as a reply value. `model` is the strict parse of the
 * SDK's own argument text (or undefined): where the SDK holds a number that is exactly the
 * double of the number written at the same place, the written text is kept (see above).
 * Lone surrogates (which JSON.parse lets through and serde_json cannot read back) become
 * U+FFFD.
 */
export function present(v, model) {
  if (v === null || v === undefined) return null;
  switch (typeof v) {
    case "string":
      return v.toWellFormed();
    case "boolean":
      return v;
    case "number":
      if (!EXACT_JS_NUMBERS && model instanceof JsonNumber && Object.is(model.value, v)) return new Raw(model.text);
      return new Raw(jsNumber(v));
    case "bigint":
      return new Raw(v.toString());
    case "object":
      break;
    default:
      return null;
  }
  if (Array.isArray(v)) return v.map((x, i) => present(x, Array.isArray(model) ? model[i] : undefined));
  const out = new Map();
  for (const [k, x] of Object.entries(v)) {
    if (x === undefined || typeof x === "function") continue;
    out.set(k.toWellFormed(), present(x, model instanceof Map ? model.get(k) : undefined));
  }
  return out;
}

/** JSON text for replies: numbers as written, maps as objects, undefined fields left out. */
export function encode(value) {
  if (value === null) return "null";
  switch (typeof value) {
    case "string":
      return JSON.stringify(value.toWellFormed());
    case "number":
      if (!Number.isFinite(value)) throw new Error("a reply cannot hold a non-finite number");
      return JSON.stringify(value);
    case "boolean":
      return value ? "true" : "false";
    case "object":
      break;
    default:
      throw new Error(`cannot encode a ${typeof value}`);
  }
  if (value instanceof JsonNumber) return value.text;
  if (value instanceof Raw) return value.text;
  if (Array.isArray(value)) return "[" + value.map(encode).join(",") + "]";
  const parts = [];
  const entries = value instanceof Map ? value.entries() : Object.entries(value);
  for (const [k, v] of entries) {
    if (v !== undefined) parts.push(JSON.stringify(k.toWellFormed()) + ":" + encode(v));
  }
  return "{" + parts.join(",") + "}";
}
