/**
 * @module sdk/sandbox-globals
 * The globals the sandbox adds to ECMAScript in every context plugin code runs in
 * (sandbox/isolate/web-globals-source.ts): `URLSearchParams`, `atob` and `btoa`, `TextEncoder` and
 * `TextDecoder` (UTF-8), `Uint8Array.prototype.toBase64` and `Uint8Array.fromBase64`, `self`, and
 * nothing else.
 * A scaffolded plugin's tsconfig.json lists this file, so an editor knows them in plugin.ts,
 * whose `lib` is plain ECMAScript: no DOM and no Node.js types, which would declare `fetch`,
 * `URL`, timers, `process` and more that the sandbox does not have (docs/plugin-runtime.md).
 * The signatures describe that implementation, not the web's. Not part of the gateway's own
 * build, whose Node.js types declare these names differently (tsconfig.json excludes it).
 */

/**
 * Query strings (`application/x-www-form-urlencoded`), the common subset of the web's class.
 * Names and values are converted with String(); a lone surrogate is sent as U+FFFD (%EF%BF%BD).
 */
declare class URLSearchParams {
  /**
   * From a query string (a leading `?` is dropped), from `[name, value]` pairs, or from an
   * object's own enumerable properties, where a property whose value is undefined is left out.
   */
  constructor(
    init?:
      | string
      | Iterable<readonly [name: string, value: string | number | boolean]>
      | Record<string, string | number | boolean | undefined>,
  );
  /** the number of name-value pairs */
  readonly size: number;
  append(name: string, value: string | number | boolean): void;
  /** removes every pair with this name */
  delete(name: string): void;
  /** the first value for the name, or null */
  get(name: string): string | null;
  getAll(name: string): string[];
  has(name: string): boolean;
  /** replaces the first pair with this name (removing the others), or appends one */
  set(name: string, value: string | number | boolean): void;
  /** sorts the pairs by name, keeping the order of pairs with the same name */
  sort(): void;
  forEach(callback: (value: string, name: string, params: URLSearchParams) => void, thisArg?: unknown): void;
  entries(): IterableIterator<[string, string]>;
  keys(): IterableIterator<string>;
  values(): IterableIterator<string>;
  [Symbol.iterator](): IterableIterator<[string, string]>;
  /** `a=1&b=x+y`, without a leading `?` */
  toString(): string;
}

/** Base64 of a string of Latin-1 characters (one byte each); throws on a character above U+00FF. */
declare function btoa(data: string): string;

/** The Latin-1 string (one character per byte) that base64 text encodes; throws on invalid base64. */
declare function atob(data: string): string;

/** The global object, as in a web worker (bundles look for it before `Function('return this')`, which the sandbox refuses). */
declare var self: typeof globalThis;

/** UTF-8 encoding (the only encoding the sandbox has). A lone surrogate is encoded as U+FFFD. */
declare class TextEncoder {
  constructor();
  /** always "utf-8" */
  readonly encoding: 'utf-8';
  encode(input?: string): Uint8Array<ArrayBuffer>;
  /** writes whole characters while they fit; how many UTF-16 units were read, how many bytes written */
  encodeInto(source: string, destination: Uint8Array): { read: number; written: number };
}

/**
 * UTF-8 decoding, as the web's TextDecoder: each invalid sequence becomes U+FFFD (with `fatal`, a
 * TypeError), a leading byte-order mark is dropped (unless `ignoreBOM`), `stream` keeps a
 * character split between calls. Other encodings throw RangeError.
 */
declare class TextDecoder {
  constructor(
    label?: 'utf-8' | 'utf8' | 'unicode-1-1-utf-8' | (string & {}),
    options?: { fatal?: boolean; ignoreBOM?: boolean },
  );
  readonly encoding: 'utf-8';
  readonly fatal: boolean;
  readonly ignoreBOM: boolean;
  decode(input?: ArrayBuffer | ArrayBufferView, options?: { stream?: boolean }): string;
}

/** ES2026's base64 of a Uint8Array (the sandbox adds it: V8 in Node.js 20 lacks it). */
interface Uint8Array<TArrayBuffer extends ArrayBufferLike = ArrayBufferLike> {
  /** the bytes in base64 (`_mcpImage` data); `omitPadding` drops the trailing `=` */
  toBase64(options?: { alphabet?: 'base64' | 'base64url'; omitPadding?: boolean }): string;
}

interface Uint8ArrayConstructor {
  /**
   * The bytes base64 text holds (ASCII whitespace is skipped); throws SyntaxError on text that is
   * not base64. `lastChunkHandling`: "loose" (default) takes an unpadded last chunk, "strict"
   * wants padding, "stop-before-partial" leaves a partial last chunk out.
   */
  fromBase64(
    string: string,
    options?: { alphabet?: 'base64' | 'base64url'; lastChunkHandling?: 'loose' | 'strict' | 'stop-before-partial' },
  ): Uint8Array<ArrayBuffer>;
}
