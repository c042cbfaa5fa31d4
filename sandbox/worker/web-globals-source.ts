/**
 * @module sandbox/worker/web-globals-source
 * A few web APIs plugin authors expect and V8 alone does not have, written in plain JavaScript and
 * evaluated inside each fresh context (so they are isolate-local like every other global):
 * `URLSearchParams` (the common subset), `atob` / `btoa`, and `self` (the global object, as in a web
 * worker: bundles such as lodash look for it before falling back to `Function('return this')`,
 * which the bootstrap refuses). There is no `URL`, `fetch`,
 * `TextEncoder` or timer: see docs/plugin-runtime.md.
 */

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

  const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  const invalid = (msg) => { const e = new Error(msg); e.name = 'InvalidCharacterError'; return e; };
  define('btoa', function btoa(input) {
    const s = String(input);
    let out = '';
    for (let i = 0; i < s.length; i += 3) {
      const a = s.charCodeAt(i), b = s.charCodeAt(i + 1), c = s.charCodeAt(i + 2);
      if (a > 255 || b > 255 || c > 255) throw invalid('btoa: the string contains characters outside Latin-1');
      const n = (a << 16) | ((b || 0) << 8) | (c || 0);
      out += ALPHABET[n >> 18] + ALPHABET[(n >> 12) & 63] + (i + 1 < s.length ? ALPHABET[(n >> 6) & 63] : '=') + (i + 2 < s.length ? ALPHABET[n & 63] : '=');
    }
    return out;
  });
  define('atob', function atob(input) {
    let s = String(input).replace(/[\t\n\f\r ]/g, '');
    if (s.length % 4 === 0) s = s.replace(/==?$/, '');
    if (s.length % 4 === 1 || /[^A-Za-z0-9+/]/.test(s)) throw invalid('atob: the string is not valid base64');
    let out = '', bits = 0, acc = 0;
    for (let i = 0; i < s.length; i++) {
      acc = (acc << 6) | ALPHABET.indexOf(s[i]);
      bits += 6;
      if (bits >= 8) { bits -= 8; out += String.fromCharCode((acc >> bits) & 255); }
    }
    return out;
  });
  define('self', globalThis);
})();
`;
