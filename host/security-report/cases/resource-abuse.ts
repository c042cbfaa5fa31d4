/**
 * @module host/security-report/cases/resource-abuse
 * Exhaustion the corpus does not try: request floods in sequence, oversized request bodies and
 * URLs, redirect loops, upstreams answering with gzip bombs, header floods, JSON too dense or too
 * deep for the isolate, and answers that never come; regular expressions too large or in the
 * costly `v` mode; typed arrays and resizable buffers past the memory limit; log floods; requests
 * made after the handler returned; arguments over the size limit. Each call must end with a clear
 * code while the gateway stays up (the common checks then probe it).
 */
import type { AttackCase, Expected, Observation } from '../catalogue.js';

function abuse(
  id: string,
  tries: string,
  handler: string,
  expected: Expected,
  extra: Partial<AttackCase> = {},
): AttackCase {
  return { id, class: 'resource-abuse', origin: 'new', tries, handler, expected, ...extra };
}

/** Fetches args.url with args.init and reads the body as JSON when args.json. */
const FETCH = `async (ctx, args) => {
  const res = await ctx.http(args.url, args.init);
  const value = args.json ? await res.json() : res.body.length;
  return { status: res.status, size: typeof value === 'number' ? value : JSON.stringify(value).length };
}`;

const fetching = (id: string, tries: string, args: Record<string, unknown>, expected: Expected): AttackCase =>
  abuse(id, tries, FETCH, expected, { args });

/** the call fails with one of these codes */
const failsWith = (...codes: string[]): Expected => ({ outcome: 'error', codes });
/** the call fails, with whatever code (the point is that it ends and the gateway stays up) */
const FAILS: Expected = { outcome: 'error' };
const MEMORY = failsWith('GW_ERR_SANDBOX_MEMORY');

/** The plugin's log lines of the case are capped in number and length. */
function logsCapped(obs: Observation): string | undefined {
  const mine = obs.logs.filter((l) => l.includes('"source":"plugin"'));
  if (mine.length > 200) return `${mine.length} plugin log lines reached the log`;
  const long = mine.find((l) => l.length > 10_000);
  return long ? `a plugin log line of ${long.length} characters reached the log` : undefined;
}

/** No request reached the upstream once the handler had returned. */
function nothingLate(obs: Observation): string | undefined {
  const late = obs.upstream.filter((r) => r.path === '/landing');
  return late.length > 0 ? `${late.length} request(s) left after the handler returned` : undefined;
}

export const RESOURCE_ABUSE_CASES: AttackCase[] = [
  abuse(
    'ra-request-flood-in-sequence',
    'Makes 200 requests one after the other (the corpus floods at once).',
    `async (ctx, args) => { for (let i = 0; i < 200; i++) await ctx.http('https://api.attack.test/json'); return { done: 200 }; }`,
    { ...failsWith('GW_ERR_BRIDGE_TOO_MANY_REQUESTS'), upstreamAtMost: 25 },
  ),
  abuse(
    'ra-request-body-too-large',
    'POSTs a 2 MiB body (the cap is 1 MiB).',
    `async (ctx, args) => (await ctx.http('https://api.attack.test/echo', { method: 'POST', body: 'x'.repeat(2 * 1024 * 1024) })).status`,
    { ...failsWith('GW_ERR_BRIDGE_BAD_REQUEST'), upstreamAtMost: 0 },
  ),
  abuse(
    'ra-request-body-astral-characters',
    'A body of 400,000 four-byte characters: under the cap in characters, 1.6 MB in UTF-8.',
    `async (ctx, args) => { const res = await ctx.http('https://api.attack.test/echo', { method: 'POST', body: '\\u{1F600}'.repeat(400000) }); return res.status; }`,
    { ...failsWith('GW_ERR_BRIDGE_BAD_REQUEST'), upstreamAtMost: 0 },
  ),
  fetching(
    'ra-url-too-long',
    'A URL of 9,000 characters.',
    { url: 'https://api.attack.test/json?q=' + 'a'.repeat(9000) },
    { ...failsWith('GW_ERR_BRIDGE_BAD_REQUEST'), upstreamAtMost: 0 },
  ),
  fetching(
    'ra-redirect-loop',
    'An upstream that redirects to itself forever.',
    { url: 'https://api.attack.test/loop' },
    { ...failsWith('GW_ERR_BRIDGE_TOO_MANY_REDIRECTS'), upstreamAtMost: 4 },
  ),
  fetching(
    'ra-gzip-bomb',
    'An upstream answering 32 MiB of zeros gzipped into 32 KiB.',
    { url: 'https://api.attack.test/gzip-bomb' },
    failsWith('GW_ERR_BRIDGE_RESPONSE_TOO_LARGE'),
  ),
  fetching(
    'ra-response-header-flood',
    'An upstream answering 2,000 headers of 100 characters.',
    { url: 'https://api.attack.test/header-flood' },
    failsWith('GW_ERR_BRIDGE_NETWORK', 'GW_ERR_BRIDGE_RESPONSE_TOO_LARGE'),
  ),
  fetching(
    'ra-dense-json-answer',
    'res.json() of an answer of a million empty objects (3 MB).',
    { url: 'https://api.attack.test/dense', json: true },
    MEMORY,
  ),
  fetching(
    'ra-deep-json-answer',
    'res.json() of an answer nested 550,000 levels deep (1.1 MB).',
    { url: 'https://api.attack.test/deep', json: true },
    MEMORY,
  ),
  abuse(
    'ra-deep-json-parse',
    'JSON.parse of 2.2 million characters nested 1.1 million levels deep.',
    `async (ctx, args) => JSON.parse('['.repeat(1100000) + ']'.repeat(1100000)).length`,
    MEMORY,
  ),
  fetching(
    'ra-upstream-never-answers',
    'An upstream that accepts the request and never answers.',
    { url: 'https://api.attack.test/hang' },
    failsWith('GW_ERR_SANDBOX_TIMEOUT', 'GW_ERR_BRIDGE_TIMEOUT'),
  ),
  abuse(
    'ra-regexp-too-large',
    'Builds a regular expression of 35,000 characters at run time (V8 compiles it without stopping for the time limit).',
    `async (ctx, args) => new RegExp('(?:a|b)'.repeat(5000)).test('ab')`,
    FAILS,
  ),
  abuse(
    'ra-regexp-v-flag',
    'Builds a regular expression in v mode, whose set operations compile slowly.',
    `async (ctx, args) => new RegExp('[\\\\p{L}--[a-z]]', 'v').test('A')`,
    FAILS,
  ),
  abuse(
    'ra-regexp-via-split',
    'Reaches the RegExp constructor through String.prototype.split with a Symbol.split object.',
    `async (ctx, args) => 'a,b'.split({ [Symbol.split]: (s) => new RegExp('x'.repeat(25000)).exec(s) })`,
    FAILS,
  ),
  abuse(
    'ra-typed-array-gigabyte',
    'Allocates a Float64Array of a gigabyte.',
    `async (ctx, args) => new Float64Array(2 ** 27).length`,
    MEMORY,
  ),
  abuse(
    'ra-resizable-arraybuffer',
    'A resizable ArrayBuffer grown to 1 GiB (its pages are committed outside the allocator that enforces the limit).',
    `async (ctx, args) => { const b = new ArrayBuffer(8, { maxByteLength: 2 ** 30 }); b.resize(2 ** 30); return b.byteLength; }`,
    FAILS,
  ),
  abuse(
    'ra-string-repeat-huge',
    'String.prototype.repeat to half a gigabyte.',
    `async (ctx, args) => 'x'.repeat(2 ** 29).length`,
    FAILS,
  ),
  abuse(
    'ra-log-flood',
    'Writes 100,000 log lines of 10,000 characters through ctx.log.',
    `async (ctx, args) => { const line = 'y'.repeat(10000); for (let i = 0; i < 100000; i++) ctx.log.info(line); return { logged: 100000 }; }`,
    { outcome: 'any' },
    { check: logsCapped },
  ),
  abuse(
    'ra-request-after-return',
    'Returns at once while a chain of promises goes on to make a request after the call has ended.',
    `async (ctx, args) => { (async () => { for (let i = 0; i < 1000; i++) await null; await ctx.http('https://api.attack.test/landing?late=1'); })().catch(() => {}); return { returned: true }; }`,
    { outcome: 'any' },
    { check: nothingLate },
  ),
  abuse(
    'ra-arguments-too-large',
    'The caller sends 300 KiB of arguments (the limit is 256 KiB).',
    `async (ctx, args) => ({ size: JSON.stringify(args).length })`,
    failsWith('GW_ERR_SANDBOX_ARGS_TOO_LARGE'),
    { args: { blob: 'z'.repeat(300 * 1024) } },
  ),
];
