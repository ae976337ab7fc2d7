// The hostile-upstream check (HOSTILE-POLLUTION): did the runtime's shared objects gain, lose
// or change a property while a stream was fed and finished?
//
// A compromised gateway or a malicious server can send "__proto__", "constructor" or
// "prototype" where a tool-call index, an id, a name or a JSON key belongs. An accumulator
// that indexes a plain object or array by such a value (`calls[entry.index] ??= {}`), or
// merges parsed objects into its own (`Object.assign(message, delta)`), writes into
// Object.prototype or swaps an object's prototype: every object of the process then carries
// what the server chose (openai-node, 2026: a "__proto__" choice or tool-call index polluted
// Array.prototype and could inject a forged tool_calls entry).
//
// `PollutionWatch` snapshots the own properties (string and symbol keys, each descriptor's
// value, getter, setter and attributes, by identity) and the [[Prototype]] of the built-in
// prototypes below and of any object an adapter names, and `check()` lists what differs
// since the last snapshot, then takes a new one: the process is the SDK's and nothing is
// restored, so one pollution is reported once, at the stream whose turn ended first after it.
// The loop (`runCase`, `serve`) checks after every stream's turn and reports the list as the
// results entry's `pollution` (docs/PROTOCOL.md). It is a tripwire, not a sandbox: code that
// wants to hide from it can.

// The reflection the check uses, taken before any subject code runs: a polluted
// `Object.hasOwn` or `Reflect.ownKeys` cannot blind it.
const { hasOwn, getPrototypeOf } = Object;
const { ownKeys, getOwnPropertyDescriptor } = Reflect;
const MapCtor = Map;
const mapGet = Map.prototype.get;
const mapSet = Map.prototype.set;
const mapKeys = Map.prototype.keys;
const symbolString = (s) => Symbol.prototype.toString.call(s);
const call = Function.prototype.call.bind(Function.prototype.call);
const cpuUsage = process.cpuUsage.bind(process);

/** The objects every stream is checked against: what a polluting write reaches first. */
export const BUILTIN_PROTOTYPES = Object.freeze([
    ["Object.prototype", Object.prototype],
    ["Array.prototype", Array.prototype],
    ["Function.prototype", Function.prototype],
    ["String.prototype", String.prototype],
    ["Number.prototype", Number.prototype],
    ["Boolean.prototype", Boolean.prototype],
    ["Promise.prototype", Promise.prototype],
    ["RegExp.prototype", RegExp.prototype],
]);

const NONE = Symbol("none");

/** A descriptor's own fields (never inherited ones: Object.prototype may hold a `value`). */
function fields(d) {
    const flags = (d.writable === true ? 1 : 0) | (d.enumerable === true ? 2 : 0) | (d.configurable === true ? 4 : 0);
    return [hasOwn(d, "value") ? d.value : NONE, hasOwn(d, "get") ? d.get : NONE, hasOwn(d, "set") ? d.set : NONE, hasOwn(d, "writable") ? flags : flags | 8];
}

function sameFields(a, b) {
    return Object.is(a[0], b[0]) && a[1] === b[1] && a[2] === b[2] && a[3] === b[3];
}

function snapshot(obj) {
    const props = new MapCtor();
    for (const key of ownKeys(obj)) call(mapSet, props, key, fields(getOwnPropertyDescriptor(obj, key)));
    return { proto: getPrototypeOf(obj), props };
}

function propName(name, key) {
    return typeof key === "symbol" ? `${name}[${symbolString(key)}]` : `${name}.${key}`;
}

/** The names of the objects to watch, from `serve({watch})`: an object, a Map or [name, object] pairs. */
function entriesOf(watch) {
    if (watch === undefined || watch === null) return [];
    if (watch instanceof Map || Array.isArray(watch)) return [...watch];
    if (typeof watch === "object") return Object.entries(watch);
    throw new TypeError("watch: expected an object, a Map or [name, object] pairs");
}

export class PollutionWatch {
    #targets = [];
    /** The CPU time spent checking, in nanoseconds: `serve` leaves it out of `elapsed_ns`. */
    cpuNs = 0;

    /** Snapshots the built-in prototypes and each of `extra` (`{name: object}`, a Map or pairs) now. */
    constructor(extra = undefined) {
        for (const [name, obj] of BUILTIN_PROTOTYPES) this.watch(name, obj);
        for (const [name, obj] of entriesOf(extra)) this.watch(name, obj);
    }

    /** Watches one more object (an SDK class's prototype, a module's shared object) from now on. */
    watch(name, obj) {
        if ((typeof obj !== "object" && typeof obj !== "function") || obj === null) {
            throw new TypeError(`watch: ${JSON.stringify(name)} is not an object`);
        }
        this.#targets.push({ name: String(name), obj, base: snapshot(obj) });
        return this;
    }

    /** The names watched, in order. */
    get names() {
        return this.#targets.map((t) => t.name);
    }

    /**
     * What changed since the last check (or the snapshot), one string per property gained,
     * lost or changed (`"Object.prototype.arguments"`, `"Array.prototype.0"`,
     * `"Array.prototype[Symbol(x)]"`) and per swapped prototype (`"Object.prototype
     * [[Prototype]]"`); empty when nothing did. What changed becomes the new baseline.
     */
    check() {
        const started = cpuUsage();
        const found = this.#compare();
        const used = cpuUsage(started);
        this.cpuNs += (used.user + used.system) * 1000;
        return found;
    }

    #compare() {
        const found = [];
        for (const t of this.#targets) {
            const { obj, base, name } = t;
            let changed = false;
            if (getPrototypeOf(obj) !== base.proto) {
                found.push(`${name} [[Prototype]]`);
                changed = true;
            }
            const keys = ownKeys(obj);
            let known = 0;
            for (let i = 0; i < keys.length; i++) {
                const key = keys[i];
                const was = call(mapGet, base.props, key);
                if (was === undefined) {
                    found.push(propName(name, key));
                    changed = true;
                    continue;
                }
                known++;
                if (!sameFields(was, fields(getOwnPropertyDescriptor(obj, key)))) {
                    found.push(propName(name, key));
                    changed = true;
                }
            }
            if (known !== base.props.size) {
                // Some key of the snapshot is gone.
                const now = new Set(keys);
                for (const key of call(mapKeys, base.props)) if (!now.has(key)) found.push(propName(name, key));
                changed = true;
            }
            if (changed) t.base = snapshot(obj);
        }
        return found;
    }
}

let shared = null;

/** The watch `runCase` uses when given none: made (snapshotted) at its first use. */
export function defaultWatch() {
    shared ??= new PollutionWatch();
    return shared;
}
