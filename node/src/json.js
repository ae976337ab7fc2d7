// Strict JSON for adapters, exactly as strict as serde_json (RFC 8259, nothing more), that
// keeps every number as written, and a small JSON Schema validator for the schema profile.
//
// JSON.parse is close but not exact: it accepts lone surrogates (`"\ud800"`), turns `1e400`
// into Infinity, and reads every number as a double, so `1.0` and `1` become the same value
// and integers past 2^53 and long decimals lose digits. `strictParse` refuses what RFC 8259
// refuses and keeps each number's text (`JsonNumber`); `encode` writes that text back, so a
// dispatched argument keeps the exact decimal value (and the spelling) the model wrote.
/** A JSON number: its text as written, and its value as a double. */
export class JsonNumber {
    text;
    value;
    constructor(text, value) {
        this.text = text;
        this.value = value;
    }
}
export class NotJson extends Error {
}
/** Documents nested up to 512 levels parse, as the harness's oracle parses them (docs/SPEC.md); a deeper one is refused. */
export const MAX_DEPTH = 513;
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
class Parser {
    s;
    i = 0;
    constructor(s) {
        this.s = s;
    }
    fail(what) {
        throw new NotJson(`${what} at character ${this.i}`);
    }
    ws() {
        const s = this.s;
        let i = this.i;
        for (;;) {
            const c = s.charCodeAt(i);
            if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d)
                i++;
            else
                break;
        }
        this.i = i;
    }
    value(depth) {
        const c = this.s.charCodeAt(this.i);
        switch (c) {
            case 0x7b /* { */: {
                if (depth + 1 >= MAX_DEPTH)
                    this.fail("nested too deeply");
                this.i++;
                const out = new Map();
                this.ws();
                if (this.s.charCodeAt(this.i) === 0x7d) {
                    this.i++;
                    return out;
                }
                for (;;) {
                    if (this.s.charCodeAt(this.i) !== 0x22)
                        this.fail("expected a key");
                    const key = this.string();
                    this.ws();
                    if (this.s.charCodeAt(this.i) !== 0x3a)
                        this.fail("expected `:`");
                    this.i++;
                    this.ws();
                    out.set(key, this.value(depth + 1)); // a repeated key: the last one wins, as in serde_json
                    this.ws();
                    const next = this.s.charCodeAt(this.i++);
                    if (next === 0x7d)
                        return out;
                    if (next !== 0x2c)
                        this.fail("expected `,` or `}`");
                    this.ws();
                }
            }
            case 0x5b /* [ */: {
                if (depth + 1 >= MAX_DEPTH)
                    this.fail("nested too deeply");
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
                    if (next === 0x5d)
                        return out;
                    if (next !== 0x2c)
                        this.fail("expected `,` or `]`");
                    this.ws();
                }
            }
            case 0x22 /* " */:
                return this.string();
            case 0x74 /* t */:
                return this.literal("true", true);
            case 0x66 /* f */:
                return this.literal("false", false);
            case 0x6e /* n */:
                return this.literal("null", null);
            default:
                return this.number();
        }
    }
    literal(word, value) {
        if (!this.s.startsWith(word, this.i))
            this.fail("expected a value");
        this.i += word.length;
        return value;
    }
    number() {
        NUMBER.lastIndex = this.i;
        const m = NUMBER.exec(this.s);
        if (m === null)
            this.fail("expected a value");
        const text = m[0];
        const value = Number(text);
        // serde_json refuses numbers a double cannot hold (it never makes Infinity).
        if (!Number.isFinite(value))
            this.fail("number out of range");
        this.i += text.length;
        return new JsonNumber(text, value);
    }
    hex4() {
        const h = this.s.slice(this.i, this.i + 4);
        if (!/^[0-9a-fA-F]{4}$/.test(h))
            this.fail("bad \\u escape");
        this.i += 4;
        return parseInt(h, 16);
    }
    string() {
        const s = this.s;
        this.i++; // the opening quote
        let out = "";
        let start = this.i;
        for (;;) {
            const c = s.charCodeAt(this.i);
            if (Number.isNaN(c))
                this.fail("unterminated string");
            if (c === 0x22) {
                out += s.slice(start, this.i);
                this.i++;
                return out;
            }
            if (c < 0x20)
                this.fail("control character in a string");
            if (c >= 0xd800 && c <= 0xdfff) {
                // Raw UTF-16 surrogates only come in pairs from well-formed UTF-8.
                const d = s.charCodeAt(this.i + 1);
                if (c > 0xdbff || !(d >= 0xdc00 && d <= 0xdfff))
                    this.fail("lone surrogate");
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
                case 0x22:
                    out += '"';
                    break;
                case 0x5c:
                    out += "\\";
                    break;
                case 0x2f:
                    out += "/";
                    break;
                case 0x62:
                    out += "\b";
                    break;
                case 0x66:
                    out += "\f";
                    break;
                case 0x6e:
                    out += "\n";
                    break;
                case 0x72:
                    out += "\r";
                    break;
                case 0x74:
                    out += "\t";
                    break;
                case 0x75: {
                    const u = this.hex4();
                    if (u >= 0xdc00 && u <= 0xdfff)
                        this.fail("lone trailing surrogate in a \\u escape");
                    if (u >= 0xd800 && u <= 0xdbff) {
                        // A leading surrogate must be followed by an escaped trailing one.
                        if (s.charCodeAt(this.i) !== 0x5c || s.charCodeAt(this.i + 1) !== 0x75) {
                            this.fail("lone leading surrogate in a \\u escape");
                        }
                        this.i += 2;
                        const low = this.hex4();
                        if (!(low >= 0xdc00 && low <= 0xdfff))
                            this.fail("lone leading surrogate in a \\u escape");
                        out += String.fromCharCode(u, low);
                    }
                    else {
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
    if (p.i !== text.length)
        p.fail("trailing characters");
    return value;
}
/** JSON text for replies: numbers as written, maps as objects, undefined fields left out. */
export function encode(value) {
    if (typeof value === "bigint")
        return value.toString();
    if (value === null)
        return "null";
    switch (typeof value) {
        case "string":
            return JSON.stringify(value);
        case "number":
            if (!Number.isFinite(value))
                throw new Error("a reply cannot hold a non-finite number");
            return JSON.stringify(value);
        case "boolean":
            return value ? "true" : "false";
        case "object":
            break;
        default:
            throw new Error(`cannot encode a ${typeof value}`);
    }
    if (value instanceof JsonNumber)
        return value.text;
    if (Array.isArray(value))
        return "[" + value.map(encode).join(",") + "]";
    const parts = [];
    const entries = value instanceof Map ? value.entries() : Object.entries(value);
    for (const [k, v] of entries) {
        if (v !== undefined)
            parts.push(JSON.stringify(k) + ":" + encode(v));
    }
    return "{" + parts.join(",") + "}";
}
// ---- JSON Schema, for the keywords tool schemas use ----
function isNumber(v) {
    return v instanceof JsonNumber || typeof v === "number";
}
function num(v) {
    return v instanceof JsonNumber ? v.value : v;
}
function isObject(v) {
    return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Map) && !(v instanceof JsonNumber);
}
/** JSON equality between an argument value and a schema value: numbers by value. */
export function jsonEqual(a, b) {
    if (isNumber(a) || isNumber(b))
        return isNumber(a) && isNumber(b) && num(a) === num(b);
    if (Array.isArray(a) || Array.isArray(b)) {
        return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
    }
    const entries = (v) => v instanceof Map ? [...v.entries()] : isObject(v) ? Object.entries(v) : null;
    const ea = entries(a);
    const eb = entries(b);
    if (ea !== null || eb !== null) {
        if (ea === null || eb === null || ea.length !== eb.length)
            return false;
        const mb = new Map(eb);
        return ea.every(([k, v]) => mb.has(k) && jsonEqual(v, mb.get(k)));
    }
    return a === b;
}
function typeOk(t, v) {
    switch (t) {
        case "string":
            return typeof v === "string";
        case "integer":
            return v instanceof JsonNumber && Number.isInteger(v.value);
        case "number":
            return v instanceof JsonNumber;
        case "boolean":
            return typeof v === "boolean";
        case "null":
            return v === null;
        case "object":
            return v instanceof Map;
        case "array":
            return Array.isArray(v);
        default:
            return true;
    }
}
/**
 * Validates `value` against a JSON Schema, for the keywords tool schemas use: type, enum,
 * const, properties, required, additionalProperties, items, min/maxLength, min/maxItems,
 * minimum, maximum, exclusiveMinimum, exclusiveMaximum, anyOf, allOf, not. Other keywords
 * are ignored: use a full validator (ajv) for anything else.
 */
export function schemaErrors(schema, value, path = "") {
    if (schema === false)
        return [`${path || "/"}: no value is allowed`];
    if (!isObject(schema))
        return [];
    const errors = [];
    const where = path || "/";
    const t = schema.type;
    if (typeof t === "string" && !typeOk(t, value))
        errors.push(`${where}: not of type ${t}`);
    else if (Array.isArray(t) && !t.some((x) => typeof x === "string" && typeOk(x, value))) {
        errors.push(`${where}: not of any type ${JSON.stringify(t)}`);
    }
    if (Array.isArray(schema.enum) && !schema.enum.some((x) => jsonEqual(value, x))) {
        errors.push(`${where}: not one of the enum values`);
    }
    if ("const" in schema && !jsonEqual(value, schema.const))
        errors.push(`${where}: not the constant`);
    if (value instanceof Map) {
        const props = isObject(schema.properties) ? schema.properties : {};
        if (Array.isArray(schema.required)) {
            for (const key of schema.required) {
                if (typeof key === "string" && !value.has(key))
                    errors.push(`${where}: required property ${JSON.stringify(key)} is missing`);
            }
        }
        const extra = schema.additionalProperties ?? true;
        for (const [key, v] of value) {
            if (Object.prototype.hasOwnProperty.call(props, key))
                errors.push(...schemaErrors(props[key], v, `${path}/${key}`));
            else if (extra === false)
                errors.push(`${where}: additional property ${JSON.stringify(key)}`);
            else if (isObject(extra))
                errors.push(...schemaErrors(extra, v, `${path}/${key}`));
        }
    }
    if (Array.isArray(value)) {
        const items = schema.items;
        if (isObject(items) || typeof items === "boolean")
            value.forEach((v, i) => errors.push(...schemaErrors(items, v, `${path}/${i}`)));
        if (typeof schema.minItems === "number" && value.length < schema.minItems)
            errors.push(`${where}: too few items`);
        if (typeof schema.maxItems === "number" && value.length > schema.maxItems)
            errors.push(`${where}: too many items`);
    }
    if (typeof value === "string") {
        const chars = [...value].length; // code points, as JSON Schema counts
        if (typeof schema.minLength === "number" && chars < schema.minLength)
            errors.push(`${where}: too short`);
        if (typeof schema.maxLength === "number" && chars > schema.maxLength)
            errors.push(`${where}: too long`);
    }
    if (value instanceof JsonNumber) {
        const v = value.value;
        const bound = (key, bad) => {
            const b = schema[key];
            if (typeof b === "number" && bad(v, b))
                errors.push(`${where}: ${key} ${b}`);
        };
        bound("minimum", (v, b) => v < b);
        bound("maximum", (v, b) => v > b);
        bound("exclusiveMinimum", (v, b) => v <= b);
        bound("exclusiveMaximum", (v, b) => v >= b);
    }
    if (Array.isArray(schema.allOf))
        for (const sub of schema.allOf)
            errors.push(...schemaErrors(sub, value, path));
    if (Array.isArray(schema.anyOf) && !schema.anyOf.some((sub) => schemaErrors(sub, value, path).length === 0)) {
        errors.push(`${where}: matches none of anyOf`);
    }
    if ("not" in schema && schemaErrors(schema.not, value, path).length === 0)
        errors.push(`${where}: matches the \`not\` schema`);
    return errors;
}
