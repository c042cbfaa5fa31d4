/**
 * @module sdk/url
 * Query strings and path segments, encoded the one safe way: a lone surrogate (which a JSON string
 * argument may hold) becomes U+FFFD (%EF%BF%BD, as URLSearchParams sends it) instead of a URIError,
 * and a path segment can never be `.`/`..` or carry a `/` that would change which resource is asked for.
 */

/** A value a query parameter or path segment may take. */
export type UrlValue = string | number | boolean;

/** encodeURIComponent that never throws: lone surrogates become U+FFFD first. */
export function enc(value: UrlValue): string {
  return encodeURIComponent(String(value).toWellFormed());
}

/** Query parameters: undefined, null and '' are left out; an array is sent joined by `,` unless `repeat`. */
export type QueryParams = Record<string, UrlValue | readonly UrlValue[] | null | undefined>;

export interface QueryOptions {
  /** send an array as `k=a&k=b` instead of `k=a,b` */
  repeat?: boolean;
}

/** `?a=1&b=2`, or '' when no parameter has a value. Keys keep their order. */
export function query(params: QueryParams | undefined, options: QueryOptions = {}): string {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(params ?? {})) {
    if (value === undefined || value === null || value === '') continue;
    if (Array.isArray(value) && options.repeat) {
      for (const v of value as readonly UrlValue[]) parts.push(`${enc(key)}=${enc(v)}`);
      continue;
    }
    parts.push(`${enc(key)}=${enc(Array.isArray(value) ? value.join(',') : (value as UrlValue))}`);
  }
  return parts.length > 0 ? `?${parts.join('&')}` : '';
}

/** Thrown for an argument that cannot be a path segment; its message names the argument. */
export class InvalidSegmentError extends Error {}

/** One path segment: encoded, never empty, `.` or `..` (`name` words the error). */
export function segment(value: UrlValue | null | undefined, name = 'path segment'): string {
  const s = value === undefined || value === null ? '' : String(value);
  if (s === '' || s === '.' || s === '..') throw new InvalidSegmentError(`Invalid ${name}: "${s}".`);
  return enc(s);
}

/** A path such as a file path or a git ref: each segment encoded, `/` kept between them. */
export function segments(value: string | null | undefined, name = 'path'): string {
  const s = String(value ?? '').replace(/^\/+|\/+$/g, '');
  if (s === '') throw new InvalidSegmentError(`Invalid ${name}: it is empty.`);
  return s
    .split('/')
    .map((part) => segment(part, name))
    .join('/');
}

/**
 * A path template whose every interpolated value is one encoded segment:
 * path`/repos/${owner}/${repo}/issues/${n}`. Use `segments()` for a value that may hold `/`.
 */
export function path(strings: TemplateStringsArray, ...values: ReadonlyArray<UrlValue>): string {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += segment(value) + (strings[i + 1] ?? '');
  });
  return out;
}
