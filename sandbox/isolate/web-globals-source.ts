/**
 * @module sandbox/isolate/web-globals-source
 * A few web APIs plugin authors expect and V8 alone does not have, written in plain JavaScript and
 * evaluated inside each fresh context (so they are isolate-local like every other global):
 * `URLSearchParams` (the common subset), `atob` / `btoa`, `TextEncoder` / `TextDecoder` (UTF-8
 * only), `Uint8Array.prototype.toBase64` / `Uint8Array.fromBase64` (ES2026; V8 in Node.js 20 has
 * neither), and `self` (the global object, as in a web worker: bundles such as lodash look for it
 * before falling back to `Function('return this')`, which the bootstrap refuses). There is no
 * `URL`, `fetch` or timer: see docs/plugin-runtime.md.
 *
 * The script is one expression whose value is the byte codecs these share (byte-codecs-source.ts,
 * as a function that makes them on first use): the sandbox's setup script passes it straight to
 * the bootstrap (prepare-context.ts), so it is never a global. Run alone (the SDK's build-time
 * evaluation) the value is dropped.
 *
 * Every fresh context runs this, so it costs every call (bench/context-phases.ts): TextEncoder and
 * TextDecoder are made only when plugin code first reads them, and the codecs only when first used.
 * Even so, the byte APIs add ~15 µs to the ~40 µs the setup script took (median CPU per fresh
 * context, 3,000 contexts, alternating with the script before them): about 6 µs defining the two
 * lazy globals, 6 µs defining Uint8Array's two methods (V8 makes a new property on a built-in
 * prototype or on the global object costly in a fresh context), 3 µs capturing intrinsics.
 */
import { BYTE_CODECS_SOURCE } from './byte-codecs-source.js';

export const WEB_GLOBALS_SOURCE = String.raw`
(function webGlobals() {
  'use strict';
  const define = (name, value) => Object.defineProperty(globalThis, name, { value, writable: true, configurable: true, enumerable: false });
  // as the web's URLSearchParams, a lone surrogate is encoded as U+FFFD (encodeURIComponent would throw)
  const encode = (s) => encodeURIComponent(String(s).toWellFormed()).replace(/[!'()~]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase()).replace(/%20/g, '+');
  const decode = (s) => { const t = s.replace(/\+/g, ' '); try { return decodeURIComponent(t); } catch (e) { return t; } };

  class URLSearchParams {
    #list = [];
    constructor(init) {
      if (init === undefined || init === null) return;
      if (typeof init === 'string') {
        const s = init.startsWith('?') ? init.slice(1) : init;
        for (const part of s.split('&')) {
          if (part === '') continue;
          const i = part.indexOf('=');
          this.#list.push(i < 0 ? [decode(part), ''] : [decode(part.slice(0, i)), decode(part.slice(i + 1))]);
        }
      } else if (typeof init === 'object' && typeof init[Symbol.iterator] === 'function') {
        for (const pair of init) {
          const p = [...pair];
          if (p.length !== 2) throw new TypeError('URLSearchParams: each pair must have two elements');
          this.#list.push([String(p[0]), String(p[1])]);
        }
      } else if (typeof init === 'object') {
        for (const k of Object.keys(init)) if (init[k] !== undefined) this.#list.push([k, String(init[k])]);
      } else this.#list.push(...new URLSearchParams(String(init)).#list);
    }
    get size() { return this.#list.length; }
    append(name, value) { this.#list.push([String(name), String(value)]); }
    delete(name) { name = String(name); this.#list = this.#list.filter(([k]) => k !== name); }
    get(name) { name = String(name); const e = this.#list.find(([k]) => k === name); return e ? e[1] : null; }
    getAll(name) { name = String(name); return this.#list.filter(([k]) => k === name).map(([, v]) => v); }
    has(name) { name = String(name); return this.#list.some(([k]) => k === name); }
    set(name, value) {
      name = String(name); value = String(value);
      const i = this.#list.findIndex(([k]) => k === name);
      if (i < 0) { this.#list.push([name, value]); return; }
      this.#list[i] = [name, value];
      this.#list = this.#list.filter(([k], j) => j <= i || k !== name);
    }
    sort() { this.#list.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)); }
    forEach(fn, thisArg) { for (const [k, v] of this.#list) fn.call(thisArg, v, k, this); }
    *entries() { for (const [k, v] of this.#list) yield [k, v]; }
    *keys() { for (const [k] of this.#list) yield k; }
    *values() { for (const [, v] of this.#list) yield v; }
    [Symbol.iterator]() { return this.entries(); }
    toString() { return this.#list.map(([k, v]) => encode(k) + '=' + encode(v)).join('&'); }
    get [Symbol.toStringTag]() { return 'URLSearchParams'; }
  }
  define('URLSearchParams', URLSearchParams);

${BYTE_CODECS_SOURCE}
  const invalid = (msg) => { const e = new Error(msg); e.name = 'InvalidCharacterError'; return e; };
  define('btoa', function btoa(input) {
    const C = codecs(), s = String(input), n = s.length, bytes = new U8(n);
    for (let i = 0; i < n; i++) {
      const c = C.codeAt(s, i);
      if (c > 255) throw invalid('btoa: the string contains characters outside Latin-1');
      bytes[i] = c;
    }
    return C.base64Encode(bytes, false, true);
  });
  // the forgiving base64 decode of the web: ASCII whitespace anywhere, padding optional, spare bits ignored
  define('atob', function atob(input) {
    const C = codecs();
    let bytes;
    try { bytes = C.base64Decode(String(input), false, 'loose'); } catch (e) { throw invalid('atob: the string is not valid base64'); }
    return C.stringOf(bytes, C.lengthOf(bytes));
  });

  // Uint8Array.prototype.toBase64 and Uint8Array.fromBase64, as ES2026 has them
  const optionsOf = (options, what) => {
    if (options === undefined) return {};
    if (options === null || (typeof options !== 'object' && typeof options !== 'function')) throw new TypeErrorCtor(what + ': options must be an object');
    return options;
  };
  const isUrlAlphabet = (opts, what) => {
    const alphabet = opts.alphabet;
    if (alphabet === undefined || alphabet === 'base64') return false;
    if (alphabet === 'base64url') return true;
    throw new TypeErrorCtor(what + ': alphabet must be "base64" or "base64url"');
  };
  Object.defineProperty(U8.prototype, 'toBase64', { value: { toBase64(options = undefined) {
    const C = codecs();
    if (!C.isUint8Array(this)) throw new TypeErrorCtor('Uint8Array.prototype.toBase64 called on an object that is not a Uint8Array');
    const opts = optionsOf(options, 'toBase64');
    const url = isUrlAlphabet(opts, 'toBase64');
    const omitPadding = !!opts.omitPadding;
    return C.base64Encode(C.bufferSource(this).bytes, url, !omitPadding);
  } }.toBase64, writable: true, configurable: true, enumerable: false });
  Object.defineProperty(U8, 'fromBase64', { value: { fromBase64(string, options = undefined) {
    if (typeof string !== 'string') throw new TypeErrorCtor('Uint8Array.fromBase64: the argument must be a string');
    const C = codecs();
    const opts = optionsOf(options, 'fromBase64');
    const url = isUrlAlphabet(opts, 'fromBase64');
    let lastChunk = opts.lastChunkHandling;
    if (lastChunk === undefined) lastChunk = 'loose';
    if (lastChunk !== 'loose' && lastChunk !== 'strict' && lastChunk !== 'stop-before-partial') throw new TypeErrorCtor('fromBase64: lastChunkHandling must be "loose", "strict" or "stop-before-partial"');
    const bytes = C.base64Decode(string, url, lastChunk);
    return C.exact(bytes, C.lengthOf(bytes));
  } }.fromBase64, writable: true, configurable: true, enumerable: false });

  // TextEncoder and TextDecoder are made when plugin code first reads them (a class costs more to
  // make in every fresh context than most plugins use it): until then each global is an accessor
  // that makes its class and puts it in its place as a plain global; an assignment replaces it.
  const lazyGlobal = (name, make) => Object.defineProperty(globalThis, name, {
    get() { const value = make(); define(name, value); return value; },
    set(value) { define(name, value); },
    configurable: true, enumerable: false,
  });

  lazyGlobal('TextEncoder', () => class TextEncoder {
    get encoding() { return 'utf-8'; }
    encode(input = '') { const C = codecs(); return C.utf8Encode(C.toText(input)); }
    encodeInto(source, destination) {
      const C = codecs(), s = C.toText(source);
      if (!C.isUint8Array(destination)) throw new TypeErrorCtor('TextEncoder.encodeInto: the destination must be a Uint8Array');
      const done = C.utf8EncodeInto(s, C.bufferSource(destination).bytes, 0);
      return { read: done[0], written: done[1] };
    }
    get [Symbol.toStringTag]() { return 'TextEncoder'; }
  });

  const StringSlice = String.prototype.slice;
  lazyGlobal('TextDecoder', () => {
    const UTF8_LABELS = ['unicode-1-1-utf-8', 'unicode11utf8', 'unicode20utf8', 'utf-8', 'utf8', 'x-unicode20utf8'];
    return class TextDecoder {
      #fatal = false;
      #ignoreBOM = false;
      #state = codecs().freshUtf8State();
      #streaming = false;
      #bomSeen = false;
      constructor(label, options) {
        if (label !== undefined) {
          const name = codecs().toText(label).replace(/^[\t\n\f\r ]+|[\t\n\f\r ]+$/g, '').toLowerCase();
          if (!UTF8_LABELS.includes(name)) throw new RangeError('TextDecoder: the encoding "' + name.slice(0, 40) + '" is not supported (the sandbox decodes utf-8 only)');
        }
        if (options !== undefined && options !== null) {
          if (typeof options !== 'object' && typeof options !== 'function') throw new TypeErrorCtor('TextDecoder: options must be an object');
          this.#fatal = !!options.fatal;
          this.#ignoreBOM = !!options.ignoreBOM;
        }
      }
      get encoding() { return 'utf-8'; }
      get fatal() { return this.#fatal; }
      get ignoreBOM() { return this.#ignoreBOM; }
      decode(input, options) {
        const C = codecs();
        const stream = options !== undefined && options !== null && !!options.stream;
        let bytes;
        if (input === undefined) bytes = new U8(0);
        else {
          const source = C.bufferSource(input);
          if (source === undefined) throw new TypeErrorCtor('TextDecoder.decode: the input must be an ArrayBuffer, a typed array or a DataView');
          bytes = source.bytes;
        }
        if (!this.#streaming) { this.#state = C.freshUtf8State(); this.#bomSeen = false; }
        this.#streaming = stream;
        let out;
        try { out = C.utf8Decode(bytes, this.#state, this.#fatal, !stream); } catch (e) {
          this.#streaming = false;
          throw e;
        }
        if (!this.#ignoreBOM && !this.#bomSeen && out.length > 0) {
          this.#bomSeen = true;
          if (C.codeAt(out, 0) === 0xfeff) out = Apply(StringSlice, out, [1]);
        }
        return out;
      }
      get [Symbol.toStringTag]() { return 'TextDecoder'; }
    };
  });

  define('self', globalThis);
  // for the bootstrap (the value of this script)
  return codecs;
})()
`;
