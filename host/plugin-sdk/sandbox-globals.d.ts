/**
 * @module host/plugin-sdk/sandbox-globals
 * The globals the sandbox adds to ECMAScript in every context plugin code runs in
 * (sandbox/worker/web-globals-source.ts): `URLSearchParams`, `atob` and `btoa`, and nothing else.
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
