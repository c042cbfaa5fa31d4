/**
 * @module sandbox/isolate/bootstrap-source
 * JavaScript evaluated inside every fresh V8 context before plugin code. It builds `ctx` INSIDE
 * the isolate, so every object plugin code can reach is isolate-local and frozen. Messages go out
 * as (kind, id, string payload) triples only: through the `__wb_bridge` callback, captured in this
 * closure and deleted from the global before plugin code runs, or, for a step run on the worker's
 * own thread, queued in this closure and copied out by the host. The host drives the context
 * through one function, the script's completion value (never a global), which it holds as a
 * Reference: `entry(ENTRY_START, queued, …)` starts a call, `entry(ENTRY_DELIVER, queued, id,
 * resultJson)` answers a ctx.http request, `entry(ENTRY_PROBE, queued, ns, toolsJson)` checks the
 * module's exports for a probe (no handler runs), `entry(ENTRY_TAKE)` hands over a queued step's
 * messages, `entry(ENTRY_COLLECT)` runs a full garbage collection of the isolate between calls
 * (the sandbox process exposes V8's gc function as `__wb_gc`; it is captured here, and as V8 makes
 * that global non-configurable it stays, emptied and read-only: plugin code never reaches gc).
 * Intrinsics are captured up front; a plugin that patches them afterwards only affects its own
 * data. Everything here is untrusted-side code: the host re-checks all it sends. The byte codecs
 * (UTF-8, base64) are the web globals' own (byte-codecs-source.ts): this script is a function of
 * them, called with the web globals' value (SETUP_SOURCE in prepare-context.ts).
 *
 * A response body arrives in one of two forms: text (the host found its bytes to be UTF-8, so they
 * are that text's UTF-8 encoding) or, with `entry(ENTRY_DELIVER, …, bytes)`, an ArrayBuffer of its
 * bytes (they are not). The response makes the other form when plugin code first asks for it
 * (`arrayBuffer()`/`bytes()` of a text body, `text()`/`json()`/`body` of a binary one) and keeps it.
 *
 * A ctx.http request over a size limit (contracts/request-limits) is refused here, before it is
 * serialised, so it never crosses into the worker, the sandbox process or the host at full size.
 *
 * One file on purpose (over 400 lines): it is one script, compiled once per isolate and run in
 * every fresh context, whose helpers share the intrinsics it captures first; split into modules it
 * would have to be joined again into this one text.
 */
import {
  MAX_HEADER_NAME_CHARS,
  MAX_HEADER_VALUE_CHARS,
  MAX_HEADERS,
  MAX_METHOD_CHARS,
  MAX_URL_CHARS,
  MAX_URL_TEXT_CHARS,
} from '../../contracts/request-limits.js';
import { GC_GLOBAL, MAX_REGEXP_SOURCE } from '../../contracts/isolate.js';

export { GC_GLOBAL, MAX_REGEXP_SOURCE };

export const BOOTSTRAP_SOURCE = String.raw`
(function bootstrap(codecs) {
  'use strict';
  const g = globalThis;
  const bridge = g.__wb_bridge;
  delete g.__wb_bridge;
  // V8 makes the gc global non-configurable: it cannot be deleted, only emptied and made read-only
  const collect = g.${GC_GLOBAL};
  if (collect !== undefined) Object.defineProperty(g, '${GC_GLOBAL}', { value: undefined, writable: false });
  delete g.SharedArrayBuffer;
  delete g.Atomics;
  // a FinalizationRegistry's cleanup callback is run by V8 after a collection, outside any call and
  // any time limit (isolated-vm runs it on the next asynchronous entry): plugin code gets neither it
  // nor WeakRef (which would let it watch collections)
  delete g.FinalizationRegistry;
  delete g.WeakRef;
  const ObjectFreeze = Object.freeze, ObjectCreate = Object.create, ObjectKeys = Object.keys;
  const ObjectHasOwn = Object.hasOwn, ObjectDefineProperty = Object.defineProperty, ObjectIsFrozen = Object.isFrozen;
  const ArrayIsArray = Array.isArray, ReflectApply = Reflect.apply;
  const JSONparse = JSON.parse, JSONstringify = JSON.stringify;
  const PromiseCtor = Promise, PromiseResolve = Promise.resolve, PromiseThen = Promise.prototype.then;
  const StringCtor = String, NumberCtor = Number, ErrorCtor = Error, TypeErrorCtor = TypeError;
  const ObjectToString = Object.prototype.toString, ObjectPropertyIsEnumerable = Object.prototype.propertyIsEnumerable;
  const NumberValueOf = Number.prototype.valueOf;
  // a URLSearchParams body is sent form-encoded, as fetch sends it, by the web globals' own
  // toString (read before plugin code could replace it): it reads the instance's private list, so
  // an object that only claims to be one throws; the encoding itself uses built-ins plugin code
  // may have replaced (it only changes its own body, which is checked as any string body is)
  const SearchParamsProto = g.URLSearchParams.prototype, SearchParamsToString = SearchParamsProto.toString;
  const ObjectIsPrototypeOf = Object.prototype.isPrototypeOf;
  const StringValueOf = String.prototype.valueOf, BooleanValueOf = Boolean.prototype.valueOf;
  const StringSlice = String.prototype.slice, StringToLowerCase = String.prototype.toLowerCase;
  const RegExpExec = RegExp.prototype.exec, StringCharCodeAt = String.prototype.charCodeAt;
  const MathFloor = Math.floor, RangeErrorFn = RangeError, Int32ArrayFn = Int32Array;
  const DateNow = Date.now;
  const Uint8ArrayCtor = Uint8Array;
  // what JSON.stringify writes escaped (a surrogate is escaped only when it is not half of a pair)
  const ESCAPED_RUNS = /[\u0000-\u001f"\\\ud800-\udfff]+/g;
  const MAX_LOG_LINES = 100, MAX_LOG_CHARS = 2000, MAX_MESSAGE = 2000;
  hardenCodeGeneration();
  hardenRegExp();
  hardenArrayBuffer();
  hardenJsonParse();

  let epoch = 0, seq = 0, logLines = 0, requests = 0, maxRequests = 0, maxBody = 0;
  let pending = ObjectCreate(null);
  // the messages of a step run on the worker's own thread, taken by the host when the step returns
  // (null: the step runs elsewhere and each message goes out through the bridge at once)
  let queue = null;
  const send = (kind, id, payload) => {
    if (queue === null) bridge(kind, id, payload);
    else ObjectDefineProperty(queue, queue.length, { value: [kind, id, payload], writable: true, enumerable: true, configurable: true });
  };

  const slice = (s, n) => ReflectApply(StringSlice, s, [0, n]);
  const lower = (s) => ReflectApply(StringToLowerCase, s, []);
  const text = (v) => (typeof v === 'string' ? v : v === undefined || v === null ? '' : StringCtor(v));
  const resolved = (v) => ReflectApply(PromiseResolve, PromiseCtor, [v]);

  function describe(e) {
    try {
      if (typeof e === 'function') return 'a function was thrown';
      if (e === null || typeof e !== 'object') return 'a non-Error value was thrown: ' + slice(StringCtor(e), 200);
      let name = '', message = '';
      try { name = e.name; } catch (x) { name = ''; }
      try { message = e.message; } catch (x) { message = ''; }
      name = typeof name === 'string' ? name : '';
      message = typeof message === 'string' ? message : '';
      if (!name && !message) return 'a non-Error object was thrown';
      // V8's rejection of a dynamic import() in an isolate says only this
      if (name === 'Error' && message === 'Not supported') return 'Not supported: import() is not available to plugins, which are one self-contained module (bundle what a handler needs into plugin.js, as workbench plugin build does)';
      return name && message ? (name === 'Error' ? message : name + ': ' + message) : name || message;
    } catch (x) {
      return 'an unprintable value was thrown';
    }
  }

  // No code built from strings: eval and the Function constructors (plain, async, generator, async
  // generator, reached as globals or through any function's constructor) throw. V8 parses such text
  // without stopping for the step's time limit, and it would bring regular-expression literals past
  // the pattern bound below; plugin code is the module the sandbox compiled, whose compile time is
  // bounded (prepare-context.ts).
  function hardenCodeGeneration() {
    const DefineProperty = Object.defineProperty, GetPrototypeOf = Object.getPrototypeOf, EvalErrorCtor = EvalError;
    const refuse = function () { throw new EvalErrorCtor('code generation from strings (eval, new Function) is not available to plugins'); };
    const stub = (name) => ({ [name]: function () { return refuse(); } })[name];
    const functionProtos = [
      Function.prototype,
      GetPrototypeOf(async function () {}),
      GetPrototypeOf(function* () {}),
      GetPrototypeOf(async function* () {}),
    ];
    const FunctionStub = stub('Function');
    // writable data properties: a plain assignment keeps their attributes and is cheaper per context
    g.eval = stub('eval');
    g.Function = FunctionStub;
    // Function.prototype stays what it is (instanceof Function, Function.prototype.call still work)
    DefineProperty(FunctionStub, 'prototype', { value: functionProtos[0], writable: false, enumerable: false, configurable: false });
    for (let i = 0; i < functionProtos.length; i++)
      DefineProperty(functionProtos[i], 'constructor', { value: i === 0 ? FunctionStub : stub('Function'), writable: false, enumerable: false, configurable: true });
  }

  // Regular expressions built at run time (RegExp, RegExp.prototype.compile, and the string
  // methods that build one from a string: match, matchAll, search) are refused over
  // MAX_REGEXP_SOURCE characters before V8 parses them, and the v (unicodeSets) flag is refused:
  // its nested classes and set operations compile for tens of seconds within that length (20,000
  // characters of nested \p{L} classes took 50 s). The pattern is read once and handed on as a
  // string, so a getter or toString cannot answer the check one thing and V8 another.
  function hardenRegExp() {
    const Intrinsic = RegExp, proto = RegExp.prototype, construct = Reflect.construct;
    const sourceOf = Object.getOwnPropertyDescriptor(proto, 'source').get, compile = proto.compile;
    const SymbolMatch = Symbol.match, SyntaxErrorCtor = SyntaxError;
    const MAX = ${MAX_REGEXP_SOURCE};
    const check = (pattern) => {
      if (pattern.length > MAX) throw new SyntaxErrorCtor('Invalid regular expression: the pattern is ' + pattern.length + ' characters long; plugins may build patterns of at most ' + MAX);
      return pattern;
    };
    const checkFlags = (flags) => {
      if (ReflectApply(StringIndexOf, flags, ['v']) >= 0) throw new SyntaxErrorCtor('Invalid regular expression flags: the v (unicodeSets) flag is not available to plugins (its set operations compile without a time limit); use u');
      return flags;
    };
    const StringIndexOf = StringCtor.prototype.indexOf;
    const toText = (v) => {
      if (typeof v === 'symbol') throw new TypeErrorCtor('Cannot convert a Symbol value to a string');
      return StringCtor(v);
    };
    const genuineSource = (p) => {
      if (p === null || (typeof p !== 'object' && typeof p !== 'function')) return undefined;
      try { return ReflectApply(sourceOf, p, []); } catch (e) { return undefined; }
    };
    // the arguments V8 gets: a RegExp itself (its source is checked), else a checked string pattern
    const patternArgs = (args, likeRegExp) => {
      const p = args[0];
      let flags = args[1];
      const source = genuineSource(p);
      // a RegExp itself: its source and flags were checked when it was made; new flags are checked
      if (source !== undefined) { check(source); return flags === undefined ? [p] : [p, checkFlags(toText(flags))]; }
      let pattern = p;
      if (likeRegExp && p !== null && (typeof p === 'object' || typeof p === 'function') && p[SymbolMatch]) {
        pattern = p.source;
        if (flags === undefined) flags = p.flags;
      }
      pattern = check(pattern === undefined ? '' : toText(pattern));
      return flags === undefined ? [pattern] : [pattern, checkFlags(toText(flags))];
    };
    const Guarded = new Proxy(Intrinsic, {
      construct(target, args, newTarget) { return construct(target, patternArgs(args, true), newTarget); },
      apply(target, thisArg, args) {
        // RegExp(re) without flags answers re itself, as the spec has it
        const p = args[0];
        if (args[1] === undefined && genuineSource(p) !== undefined && p.constructor === Guarded) return p;
        return ReflectApply(target, thisArg, patternArgs(args, true));
      },
    });
    g.RegExp = Guarded;
    proto.constructor = Guarded;
    proto.compile = { compile(pattern, flags) { return ReflectApply(compile, this, patternArgs([pattern, flags], false)); } }.compile;
    const SP = StringCtor.prototype;
    const guardString = (name, symbol) => {
      const original = SP[name];
      const method = { [name](regexp) {
        if (this === undefined || this === null) throw new TypeErrorCtor('String.prototype.' + name + ' called on null or undefined');
        if (regexp !== undefined && regexp !== null) {
          const own = regexp[symbol];
          // the object's own method, called as the spec calls it (read once: no second look)
          if (own !== undefined && own !== null) {
            if (name === 'matchAll' && regexp[SymbolMatch] && ReflectApply(StringIndexOf, toText(regexp.flags), ['g']) < 0) throw new TypeErrorCtor('String.prototype.matchAll called with a non-global RegExp argument');
            return ReflectApply(own, regexp, [this]);
          }
        }
        return ReflectApply(original, this, [check(regexp === undefined ? '' : toText(regexp))]);
      } }[name];
      SP[name] = method;
    };
    guardString('match', Symbol.match);
    guardString('matchAll', Symbol.matchAll);
    guardString('search', Symbol.search);
    // RegExp.prototype[Symbol.split] and [Symbol.matchAll] make a new RegExp from \`this\`, with the
    // intrinsic constructor when \`this.constructor\` is undefined: they run on a stand-in whose
    // constructor leads to the guarded one (or to the species \`this\` names) and whose source,
    // flags and lastIndex were read once from \`this\`, so the new RegExp is checked like any other
    const SymbolSpecies = Symbol.species;
    const viaStandIn = (name, symbol) => {
      const original = proto[symbol];
      proto[symbol] = { [name](...args) {
        const rx = this;
        if (rx === null || (typeof rx !== 'object' && typeof rx !== 'function')) throw new TypeErrorCtor('RegExp.prototype[' + name + '] called on a non-object');
        const C0 = rx.constructor;
        let C = Guarded;
        if (C0 !== undefined) {
          if (C0 === null || (typeof C0 !== 'object' && typeof C0 !== 'function')) throw new TypeErrorCtor('the constructor of a RegExp must be an object');
          const S = C0[SymbolSpecies];
          if (S !== undefined && S !== null) C = S;
        }
        const standIn = ObjectCreate(null);
        const species = ObjectCreate(null);
        species[SymbolSpecies] = C;
        standIn.constructor = species;
        const source = genuineSource(rx);
        standIn.source = check(source !== undefined ? source : toText(rx.source));
        standIn.flags = checkFlags(toText(rx.flags));
        standIn.lastIndex = rx.lastIndex;
        standIn[SymbolMatch] = true;
        return ReflectApply(original, standIn, args);
      } }[name];
    };
    viaStandIn('[Symbol.split]', Symbol.split);
    viaStandIn('[Symbol.matchAll]', Symbol.matchAll);
  }

  // A resizable ArrayBuffer reserves its maximum up front and commits pages as it grows, outside
  // the allocator that keeps an isolate within its memory limit (256 MiB grew in a 64 MiB isolate):
  // plugin code gets fixed-length buffers only.
  function hardenArrayBuffer() {
    const Intrinsic = ArrayBuffer, construct = Reflect.construct, RangeErrorCtor = RangeError;
    const Guarded = new Proxy(Intrinsic, {
      construct(target, args, newTarget) {
        const options = args[1];
        if (options !== null && typeof options === 'object' && options.maxByteLength !== undefined)
          throw new RangeErrorCtor('resizable ArrayBuffers (maxByteLength) are not available to plugins: their memory is outside the isolate\'s limit');
        return construct(target, [args[0]], newTarget);
      },
    });
    g.ArrayBuffer = Guarded;
    Intrinsic.prototype.constructor = Guarded;
  }

  // JSON.parse of a text made of millions of tiny objects ('[{},{},…]': 7 MB is 2.5 million) or of
  // one object with a million members needs more than an isolate's memory, and V8's collections
  // close to the limit are not interrupted (2.5 million {} took 4 s in a 64 MiB isolate and cost the
  // sandbox process; 838,000 members in one object aborted it). A text over 1 MiB is first scanned
  // (strings skipped) and refused, as the memory error it would become, when it holds more objects
  // and arrays than the isolate has room for (64 bytes each within three quarters of its limit), an
  // object with more members than 4,800 per MiB of it, or nesting deeper than 10,000 levels.
  const JSON_SCAN_FROM = 1048576, JSON_BYTES_PER_CONTAINER = 64, JSON_MEMBERS_PER_MIB = 4800, JSON_MAX_DEPTH = 10000;
  let jsonContainerBudget = 0, jsonMemberBudget = 0;
  function setJsonBudgets(memoryMb) {
    jsonContainerBudget = MathFloor((memoryMb * 1048576 * 0.75) / JSON_BYTES_PER_CONTAINER);
    jsonMemberBudget = MathFloor(memoryMb * JSON_MEMBERS_PER_MIB);
  }
  setJsonBudgets(64); // isolated-vm's default limit, until a call says its own
  function jsonTooDense(text) {
    const n = text.length;
    const members = new Int32ArrayFn(JSON_MAX_DEPTH);
    let containers = 0, depth = 0, inString = false;
    for (let i = 0; i < n; i++) {
      const c = ReflectApply(StringCharCodeAt, text, [i]);
      if (inString) {
        if (c === 92) i++;
        else if (c === 34) inString = false;
      } else if (c === 34) inString = true;
      else if (c === 123 || c === 91) {
        if (++containers > jsonContainerBudget) return 'holds more than ' + jsonContainerBudget + ' objects and arrays';
        if (depth === JSON_MAX_DEPTH) return 'nests deeper than ' + JSON_MAX_DEPTH + ' levels';
        members[depth++] = c === 123 ? 0 : -1;
      } else if (c === 125 || c === 93) {
        if (depth > 0) depth--;
      } else if (c === 58 && depth > 0 && members[depth - 1] >= 0) {
        if (++members[depth - 1] > jsonMemberBudget) return 'has an object with more than ' + jsonMemberBudget + ' members';
      }
    }
    return undefined;
  }
  function parseJson(text, reviver) {
    if (typeof text === 'string' && text.length > JSON_SCAN_FROM) {
      const why = jsonTooDense(text);
      if (why !== undefined) {
        const e = new RangeErrorFn('the JSON text (' + text.length + ' characters) ' + why + ", more than this plugin's memory can parse");
        e.code = 'GW_ERR_SANDBOX_MEMORY';
        throw e;
      }
    }
    return reviver === undefined ? JSONparse(text) : JSONparse(text, reviver);
  }
  function hardenJsonParse() {
    ObjectDefineProperty(JSON, 'parse', { value: function parse(text, reviver) { return parseJson(text, reviver); }, writable: true, configurable: true, enumerable: false });
  }

  function errorReport(e, code) {
    let errorCode;
    try {
      const c = e !== null && typeof e === 'object' ? e.code : undefined;
      if (typeof c === 'string') errorCode = slice(c, 64);
    } catch (x) { errorCode = undefined; }
    // no prototype: a plugin's Object.prototype.toJSON must not rewrite what is reported
    const report = ObjectCreate(null);
    report.message = slice(describe(e), MAX_MESSAGE);
    if (code) report.code = code;
    if (errorCode) report.errorCode = errorCode;
    return JSONstringify(report);
  }

  function deepFreeze(v) {
    if (v !== null && typeof v === 'object' && !ObjectIsFrozen(v)) {
      ObjectFreeze(v);
      const keys = ObjectKeys(v);
      for (let i = 0; i < keys.length; i++) deepFreeze(v[keys[i]]);
    }
    return v;
  }

  // a request over a size limit: refused with the host's wording, never serialised or sent
  const OVERSIZED = {};
  let oversizedWhy = '';
  const oversized = (why) => { oversizedWhy = why; throw OVERSIZED; };

  function encodeRequest(url, init) {
    const headers = ObjectCreate(null);
    let method = 'GET', body, bytes, count = 0;
    const setHeader = (rawName, rawValue) => {
      const name = lower(text(rawName)), value = text(rawValue);
      if (name.length > ${MAX_HEADER_NAME_CHARS}) oversized('"' + slice(name, 40) + '" is not a valid header name');
      if (value.length > ${MAX_HEADER_VALUE_CHARS}) oversized('header "' + slice(name, 40) + '" is longer than ${MAX_HEADER_VALUE_CHARS} characters');
      if (!ObjectHasOwn(headers, name) && ++count > ${MAX_HEADERS}) oversized('at most ${MAX_HEADERS} headers are allowed');
      headers[name] = value;
    };
    const u = text(url);
    if (u.length > ${MAX_URL_TEXT_CHARS}) oversized('the URL is longer than ${MAX_URL_CHARS} characters');
    if (init !== undefined && init !== null) {
      if (typeof init !== 'object') throw new TypeErrorCtor('init must be an object');
      if (init.method !== undefined) method = text(init.method);
      if (method.length > ${MAX_METHOD_CHARS}) oversized('method "' + slice(method, 20) + '" is not supported');
      const h = init.headers;
      if (h !== undefined && h !== null) {
        if (ArrayIsArray(h)) {
          for (let i = 0; i < h.length; i++) setHeader(h[i][0], h[i][1]);
        } else if (typeof h === 'object') {
          const keys = ObjectKeys(h);
          for (let i = 0; i < keys.length; i++) setHeader(keys[i], h[keys[i]]);
        } else throw new TypeErrorCtor('init.headers must be an object or an array of pairs');
      }
      const json = init.json;
      const b = json !== undefined ? json : init.body;
      if (b !== undefined && b !== null) {
        if (typeof b === 'string') body = b;
        else if (json === undefined && (bytes = binaryBody(b)) !== undefined) {
          const n = codecs().lengthOf(bytes);
          if (n > maxBody) oversized('the request body is ' + n + ' bytes; the limit is ' + maxBody);
        } else if (json === undefined && typeof b === 'object' && ReflectApply(ObjectIsPrototypeOf, SearchParamsProto, [b])) {
          body = text(ReflectApply(SearchParamsToString, b, []));
          if (headers['content-type'] === undefined) setHeader('content-type', 'application/x-www-form-urlencoded;charset=UTF-8');
        } else if (typeof b === 'object') {
          body = JSONstringify(b);
          if (headers['content-type'] === undefined) setHeader('content-type', 'application/json');
        } else if (json !== undefined) body = text(b);
        else throw new TypeErrorCtor('init.body must be a string, an ArrayBuffer, a typed array or DataView, a URLSearchParams, or an object or array to send as JSON (not a ' + typeof b + ')');
      }
      // every UTF-16 unit takes at least one UTF-8 byte: a body longer than the cap in units is over
      // it in bytes (one within it in units but over it in bytes is refused by the worker)
      if (body !== undefined && body.length > maxBody) oversized('the request body is at least ' + body.length + ' bytes; the limit is ' + maxBody);
    }
    // no prototype: a plugin's Object.prototype.toJSON must not rewrite the request after its checks
    const req = ObjectCreate(null);
    req.url = u;
    req.method = method;
    req.headers = headers;
    if (body !== undefined) req.body = body;
    // bytes cross as base64: every message on the way to the host is JSON
    else if (bytes !== undefined) req.bodyBase64 = codecs().base64Encode(bytes, false, true);
    return JSONstringify(req);
  }

  // The bytes of a binary request body (ArrayBuffer, typed array or DataView, found by the
  // intrinsics, not by what the object says it is), or undefined when b is none of those. Encoded
  // before plugin code runs again, so they are sent as they are now.
  function binaryBody(b) {
    let source;
    try { source = codecs().bufferSource(b); } catch (e) { throw new TypeErrorCtor('init.body is a detached ArrayBuffer, or a view of one'); }
    if (source === undefined) return undefined;
    if (source.shared) throw new TypeErrorCtor('init.body is a SharedArrayBuffer, or a view of one: send an ArrayBuffer or a typed array');
    return source.bytes;
  }

  function makeHeaders(raw) {
    const h = ObjectCreate(null);
    const keys = ObjectKeys(raw);
    for (let i = 0; i < keys.length; i++) h[lower(keys[i])] = text(raw[keys[i]]);
    return ObjectFreeze({
      get: (name) => { const v = h[lower(text(name))]; return v === undefined ? null : v; },
      has: (name) => h[lower(text(name))] !== undefined,
      keys: () => ObjectKeys(h),
      entries: () => { const k = ObjectKeys(h), out = []; for (let i = 0; i < k.length; i++) out[i] = [k[i], h[k[i]]]; return out; },
      forEach: (fn) => { const k = ObjectKeys(h); for (let i = 0; i < k.length; i++) fn(h[k[i]], k[i]); },
      toJSON: () => { const o = {}; const k = ObjectKeys(h); for (let i = 0; i < k.length; i++) o[k[i]] = h[k[i]]; return o; },
    });
  }

  // raw: the body's bytes (an ArrayBuffer) when they are not UTF-8 text; otherwise the body is r.body
  function makeResponse(r, raw) {
    const status = r.status | 0;
    let body = raw === undefined ? text(r.body) : undefined;
    let bytes = raw === undefined ? undefined : new Uint8ArrayCtor(raw);
    // a binary body's text, decoded as the host decodes text (U+FFFD for invalid sequences, no BOM)
    const textOf = () => {
      if (body === undefined) {
        const C = codecs();
        body = C.utf8Decode(bytes, C.freshUtf8State(), false, true);
        if (body.length > 0 && ReflectApply(StringCharCodeAt, body, [0]) === 0xfeff) body = ReflectApply(StringSlice, body, [1]);
      }
      return body;
    };
    // a copy of the bytes for each caller: what one changes, the next does not see
    const copy = () => {
      if (bytes === undefined) bytes = codecs().utf8Encode(body);
      return codecs().copyOf(bytes);
    };
    const res = {
      status,
      ok: status >= 200 && status < 300,
      statusText: text(r.statusText),
      url: text(r.url),
      headers: makeHeaders(r.headers),
      body,
      text: raw === undefined ? () => resolved(body) : () => new PromiseCtor((ok) => ok(textOf())),
      json: () => new PromiseCtor((ok) => ok(parseJson(textOf()))),
      arrayBuffer: () => new PromiseCtor((ok) => ok(codecs().bufferOf(copy()))),
      bytes: () => new PromiseCtor((ok) => ok(copy())),
    };
    if (raw !== undefined) ObjectDefineProperty(res, 'body', { get: textOf, enumerable: true, configurable: true });
    return ObjectFreeze(res);
  }

  function httpError(code, message) {
    const e = new ErrorCtor(code + ': ' + message);
    ObjectDefineProperty(e, 'name', { value: 'HttpError', enumerable: false });
    ObjectDefineProperty(e, 'code', { value: code, enumerable: true });
    return e;
  }

  function http(url, init) {
    return new PromiseCtor((resolve, reject) => {
      if (++requests > maxRequests) {
        reject(httpError('GW_ERR_BRIDGE_TOO_MANY_REQUESTS', 'a call may make at most ' + maxRequests + ' requests'));
        return;
      }
      let json;
      try { json = encodeRequest(url, init); } catch (e) {
        reject(httpError('GW_ERR_BRIDGE_BAD_REQUEST', e === OVERSIZED ? oversizedWhy : slice(describe(e), 300)));
        return;
      }
      const id = ++seq;
      pending[id] = { resolve, reject };
      send('http', id, json);
    });
  }

  function deliver(id, resultJson, raw) {
    const p = pending[id];
    if (p === undefined) return;
    delete pending[id];
    let r;
    try { r = JSONparse(resultJson); } catch (e) { p.reject(httpError('GW_ERR_BRIDGE_NETWORK', 'malformed reply')); return; }
    if (r.ok === true) p.resolve(makeResponse(r.response, raw));
    else p.reject(httpError(text(r.error.code), text(r.error.message)));
  }

  function makeLog() {
    const at = (level) => (message, data) => {
      if (logLines >= MAX_LOG_LINES) return;
      logLines++;
      let line = slice(text(message), MAX_LOG_CHARS);
      if (data !== undefined) {
        try { line = slice(line + ' ' + JSONstringify(data), MAX_LOG_CHARS); } catch (e) { line = slice(line + ' [unserialisable data]', MAX_LOG_CHARS); }
      }
      send('log', level, line);
    };
    return ObjectFreeze({ info: at(0), warn: at(1), error: at(2) });
  }

  // JSON.stringify writes a Number, String or Boolean object as its primitive value, without
  // visiting it: such an object is unwrapped here as JSON.stringify would (ToNumber, ToString, its
  // boolean), so that what is counted is what is written. Found by its tag, and a String object
  // also by its own non-enumerable length (which it always has, whatever its tag says: its text,
  // unlike a number's, has no bound); the brand check runs only for objects found so.
  function unboxed(v) {
    const tag = ReflectApply(ObjectToString, v, []);
    if (tag === '[object String]' || (ObjectHasOwn(v, 'length') && !ReflectApply(ObjectPropertyIsEnumerable, v, ['length']))) {
      try { ReflectApply(StringValueOf, v, []); } catch (e) { return v; }
      return StringCtor(v);
    }
    if (tag === '[object Number]') {
      try { ReflectApply(NumberValueOf, v, []); } catch (e) { return v; }
      return NumberCtor(v);
    }
    if (tag === '[object Boolean]') {
      try { return ReflectApply(BooleanValueOf, v, []); } catch (e) { return v; }
    }
    return v;
  }

  // The length of a number as JSON writes it: NaN and ±Infinity as null, an integer below 1e21 as
  // its digits (counted without making the string: most numbers in results are integers), any
  // other number as String writes it.
  function numberLength(v) {
    if (v - v !== 0) return 4;
    const a = v < 0 ? -v : v;
    if (a < 1e21 && a % 1 === 0) {
      let n = v < 0 ? 2 : 1;
      for (let p = 10; a >= p; p *= 10) n++;
      return n;
    }
    return StringCtor(v).length;
  }

  // The characters JSON.stringify writes for the string s, quotes included, when they are at most
  // room; otherwise some number above room. Escaped characters are found in runs by a regular
  // expression (text with few of them costs a native scan) and counted as written: 2 for " \\ and
  // \b \f \n \r \t, 6 for the other controls and a lone surrogate.
  function quotedLength(s, room) {
    const n = s.length + 2;
    ESCAPED_RUNS.lastIndex = 0;
    let extra = 0, m;
    while ((m = ReflectApply(RegExpExec, ESCAPED_RUNS, [s])) !== null) {
      const run = m[0];
      for (let i = 0; i < run.length; i++) {
        const c = ReflectApply(StringCharCodeAt, run, [i]);
        if (c === 0x22 || c === 0x5c || c === 0x08 || c === 0x0c || c === 0x0a || c === 0x0d || c === 0x09) extra += 1;
        else if (c >= 0xd800 && c <= 0xdbff && i + 1 < run.length) {
          const d = ReflectApply(StringCharCodeAt, run, [i + 1]);
          if (d >= 0xdc00 && d <= 0xdfff) i++; // a pair is written as it is
          else extra += 5;
        } else extra += 5;
        if (n + extra > room) return n + extra;
      }
    }
    return n + extra;
  }

  // Serialises the result with a running count of its size, so an oversized result is refused
  // before the full JSON text is built (which could exceed the memory limit on its own). JSON.stringify
  // writes as it goes, so the count must follow what is written (commas, colons and brackets
  // included: exact for all but an empty array or object, counted 1): numbers, booleans and null count as
  // the characters they are written as (a number counted as one let 8 million copies of -1.797e308,
  // 96 MB of JSON, pass as 8 MB), and strings and keys with their escapes (8 MB of control
  // characters is 48 MB of JSON). Strings are scanned for escapes only once they could matter:
  // while even six characters for each one of every string so far fits the limit, none is.
  const TOO_LARGE = {};
  function stringifyResult(value, max) {
    // size: what is written, escapes counted once strings are scanned; upper: at least what is
    // written (strings not scanned counted at six characters each). Refused when size passes max,
    // so at most about twice max is ever written.
    let size = 0, upper = 0, root = true;
    const addString = (s) => {
      const worst = 6 * s.length + 2;
      if (upper + worst <= max) { size += s.length + 2; upper += worst; return; }
      const q = quotedLength(s, max - size);
      size += q;
      upper += q;
    };
    return JSONstringify(value, function resultReplacer(key, v) {
      let t = typeof v;
      if (t === 'function' || t === 'symbol') throw new TypeErrorCtor('the result contains a ' + t + (key ? ' at key "' + slice(key, 100) + '"' : ''));
      if (t === 'bigint') throw new TypeErrorCtor('the result contains a BigInt' + (key ? ' at key "' + slice(key, 100) + '"' : '') + ': JSON has none; return it as a string (or a number if it fits)');
      if (t === 'object' && v !== null && !ArrayIsArray(v)) { v = unboxed(v); t = typeof v; }
      // the characters this value is written as, apart from a string's (an object or array: 1, its
      // brackets less the comma its last member does not have; undefined: nothing, or null in an array)
      let n;
      if (t === 'string') n = 0;
      else if (t === 'number') n = numberLength(v);
      else if (t === 'boolean') n = v ? 4 : 5;
      else if (t === 'undefined') n = -1;
      else n = v === null ? 4 : 1;
      // and, inside an array or object, the comma after it and its key, "key": (array indexes are
      // not written; the root value has neither)
      if (root) root = false;
      else if (ArrayIsArray(this)) n = (n < 0 ? 4 : n) + 1;
      else if (n >= 0) { addString(key); n += 2; }
      if (n > 0) { size += n; upper += n; }
      if (t === 'string') addString(v);
      if (size > max) throw TOO_LARGE;
      return v;
    });
  }

  function start(ns, tool, argsJson, configJson, limitsJson) {
    const my = ++epoch;
    pending = ObjectCreate(null);
    logLines = 0;
    requests = 0;
    const limits = JSONparse(limitsJson);
    maxRequests = limits.maxRequestsPerCall;
    if (limits.memoryMb > 0) setJsonBudgets(limits.memoryMb);
    maxBody = limits.maxRequestBodyBytes;
    let settled = false;
    const finish = (kind, payload) => {
      if (settled || my !== epoch) return;
      settled = true;
      send(kind, my, payload);
    };
    const fail = (e, code) => finish('fail', errorReport(e, code));
    const succeed = (value) => {
      let json;
      try { json = stringifyResult(value, limits.maxResultBytes); } catch (e) {
        if (e === TOO_LARGE) fail(new ErrorCtor('the result is larger than ' + limits.maxResultBytes + ' bytes'), 'GW_ERR_SANDBOX_RESULT_TOO_LARGE');
        else fail(e, 'GW_ERR_SANDBOX_RESULT_INVALID');
        return;
      }
      if (json === undefined) { fail(new TypeErrorCtor('the handler returned undefined; return JSON data'), 'GW_ERR_SANDBOX_RESULT_INVALID'); return; }
      if (json.length > limits.maxResultBytes) {
        fail(new ErrorCtor('the result is at least ' + json.length + ' bytes; the limit is ' + limits.maxResultBytes), 'GW_ERR_SANDBOX_RESULT_TOO_LARGE');
        return;
      }
      finish('done', json);
    };
    let def, handler;
    try {
      def = ns.default;
      if (def === null || (typeof def !== 'object' && typeof def !== 'function')) {
        fail(new TypeErrorCtor('the plugin module has no default export object'), 'GW_ERR_SANDBOX_TOOL_MISSING');
        return;
      }
      handler = ObjectHasOwn(def, tool) ? def[tool] : undefined;
    } catch (e) { fail(e, 'GW_ERR_SANDBOX_TOOL_MISSING'); return; }
    if (typeof handler !== 'function') {
      fail(new TypeErrorCtor('the plugin exports no handler for "' + tool + '"'), 'GW_ERR_SANDBOX_TOOL_MISSING');
      return;
    }
    let args, config;
    try { args = JSONparse(argsJson); config = deepFreeze(JSONparse(configJson)); } catch (e) { fail(e); return; }
    // what this call may still do, so that a plugin can plan its requests (a thread's newest
    // messages, a page's nested blocks) instead of assuming the default limits
    // and how much of its wall-clock time is left, for a tool that polls (an answer computed upstream)
    const wallEnds = DateNow() + (limits.wallMsLeft > 0 ? limits.wallMsLeft : 0);
    const callLimits = ObjectFreeze({
      maxRequests: limits.maxRequestsPerCall,
      maxResultBytes: limits.maxResultBytes,
      maxRequestBodyBytes: limits.maxRequestBodyBytes,
      requestsLeft: () => (my === epoch && maxRequests > requests ? maxRequests - requests : 0),
      timeLeftMs: () => {
        const left = wallEnds - DateNow();
        return my === epoch && left > 0 ? MathFloor(left) : 0;
      },
    });
    const ctx = ObjectFreeze({ http: ObjectFreeze(ObjectDefineProperty((url, init) => http(url, init), 'fetch', { value: (url, init) => http(url, init) })), config, log: makeLog(), limits: callLimits });
    let result;
    try { result = ReflectApply(handler, def, [ctx, args]); } catch (e) { fail(e); return; }
    ReflectApply(PromiseThen, resolved(result), [succeed, (e) => fail(e)]);
  }

  // a probe (start-up, plugin validate): the module has compiled and evaluated in this context;
  // which of the manifest's tools has no function in its default export? Answered as a result,
  // {"noDefault": bool, "missing": [names]}; no handler runs. (Plugin code has run at top level
  // by now and could lie here: the probe catches mistakes, it is not a security check.)
  function probe(ns, toolsJson) {
    const my = ++epoch;
    const tools = JSONparse(toolsJson);
    const missing = [];
    let def;
    try { def = ns.default; } catch (e) { send('fail', my, errorReport(e, 'GW_ERR_SANDBOX_TOOL_MISSING')); return; }
    const noDefault = def === null || (typeof def !== 'object' && typeof def !== 'function');
    for (let i = 0; i < tools.length; i++) {
      let handler;
      try { handler = noDefault ? undefined : ObjectHasOwn(def, tools[i]) ? def[tools[i]] : undefined; } catch (e) { handler = undefined; }
      if (typeof handler !== 'function') ObjectDefineProperty(missing, missing.length, { value: tools[i], writable: true, enumerable: true, configurable: true });
    }
    // written by hand: the module's top-level code has run, and a toJSON it put on Object.prototype
    // or Array.prototype must not rewrite the verdict (each name is a string, which has no toJSON)
    let names = '';
    for (let i = 0; i < missing.length; i++) names += (i > 0 ? ',' : '') + JSONstringify(missing[i]);
    send('done', my, '{"noDefault":' + (noDefault ? 'true' : 'false') + ',"missing":[' + names + ']}');
  }

  // the completion value of this script: only the host gets it, as a Reference
  return function entry(op, queued, a, b, c, d, e) {
    if (op === 2) { const out = queue; queue = null; return out; }
    if (op === 3) { if (typeof collect !== 'function') return false; collect(); return true; }
    queue = queued === 1 ? [] : null;
    if (op === 0) start(a, b, c, d, e);
    else if (op === 1) deliver(a, b, c);
    else if (op === 4) probe(a, b);
  };
})
`;

/**
 * First argument of the bootstrap's entry function. The second is 1 when the step runs on the
 * worker's thread: the bootstrap then queues the step's messages instead of calling the bridge,
 * and the host takes them with ENTRY_TAKE (an array of [kind, id, payload], or null) as the step
 * returns.
 */
export const ENTRY_START = 0;
/** `entry(ENTRY_DELIVER, queued, id, resultJson, bytes?)`: bytes, an ArrayBuffer, for a body that is not UTF-8 text */
export const ENTRY_DELIVER = 1;
export const ENTRY_TAKE = 2;
/** returns true once the isolate has been collected, false where the process exposes no gc */
export const ENTRY_COLLECT = 3;
/** a probe: `entry(ENTRY_PROBE, queued, namespace, toolsJson)` answers which tools have no function */
export const ENTRY_PROBE = 4;

/** Names of the log levels, indexed by the id the bootstrap sends with a 'log' message. */
export const LOG_LEVELS = ['info', 'warn', 'error'] as const;
