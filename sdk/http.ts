/**
 * @module sdk/http
 * One JSON client for a provider's API, written once for every integration: the request (base URL,
 * default headers, JSON or byte bodies, query string), the answer (text → JSON, or bytes), and the
 * one mapping from a failed answer to the Error an agent reads — status, the provider's own message,
 * Retry-After — and from the gateway's refusals (answer too large, no answer in time) to words.
 * A plugin gives its provider's name, how to read its error bodies and, where its wording differs,
 * its own mapping; everything else is here.
 */
import type { HttpError, HttpHeaders, HttpResponse, PluginContext } from '../contracts/plugin-api.js';
import { query as queryString, type QueryParams } from './url.js';

/** What a failed answer was, handed to a plugin's own mapping. */
export interface ApiFailure {
  status: number;
  statusText: string;
  headers: HttpHeaders;
  /** the body as text */
  text: string;
  /** the body parsed as JSON, or undefined when it is empty or not JSON */
  data: unknown;
  /** the provider's own message (from `describe`), without a trailing period; '' when none */
  detail: string;
  /** the Retry-After header as sent, or null */
  retryAfter: string | null;
  /** Retry-After in whole seconds (from seconds or an HTTP date), when the answer carried one */
  retryAfterSec: number | undefined;
  method: string;
  url: string;
  /** what the request did, in words ("read task 42") */
  action: string;
  /** the request's options, for plugin-specific hints (e.g. which OAuth scope a call needs) */
  options: RequestOptions;
}

/** A request the gateway refused or stopped (ctx.http rejected), handed to a plugin's own mapping. */
export interface BridgeFailure {
  code: string;
  error: HttpError;
  method: string;
  action: string;
  options: RequestOptions;
}

/** An answer outside 2xx, as the default mapping words it; `status` and `retryAfterSec` stay readable. Named Error: the agent reads only the message. */
export class UpstreamError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly retryAfterSec?: number,
  ) {
    super(message);
  }
}

export interface ApiOptions {
  /**
   * the API's base URL, e.g. "https://api.github.com", or a function of the call's ctx for an API
   * whose base is the connection's own instance (`(ctx) => instanceUrl(ctx, 'https://gitlab.com') + '/api/v4'`);
   * a request path that is a full http(s) URL is used as it is
   */
  base: string | ((ctx: PluginContext) => string);
  /** the provider's name as the agent reads it in errors ("GitHub") */
  provider: string;
  /** the integration's name, for "reconnect <integration>" (default: the provider in lower case) */
  integration?: string;
  /** headers sent with every request (accept defaults to application/json) */
  headers?: Record<string, string>;
  /** how the provider's error body names the problem; default: `message`, `error_description`, `error` or `errors[].message` */
  describe?: (data: unknown, text: string) => string;
  /** the plugin's own words for a failed answer; return undefined to use the default mapping */
  failure?: (failure: ApiFailure) => Error | undefined;
  /** the plugin's own words for a refused request; return undefined for the default (timeouts and size) or the error itself */
  bridgeFailure?: (failure: BridgeFailure) => Error | undefined;
  /** wraps every JSON body (e.g. Asana's `{data: …}`) */
  wrapBody?: (body: unknown) => unknown;
}

/** How the answer is returned: parsed JSON (default), text, bytes, or the response itself. */
export type Expect = 'json' | 'text' | 'bytes' | 'response';

export interface RequestOptions {
  /** what the request does, in words, for errors ("list the issues of octo/hello") */
  action: string;
  query?: QueryParams;
  /** sent as JSON (after `wrapBody`) */
  body?: unknown;
  /** sent as it is, with `contentType` (a string or bytes: an upload) */
  rawBody?: string | Uint8Array;
  contentType?: string;
  headers?: Record<string, string>;
  /** the accept header for this request */
  accept?: string;
  expect?: Expect;
  /** when true, an answer that is not JSON is returned as its text instead of failing */
  lenient?: boolean;
  /** plugin-specific hints for its own `failure` mapping */
  [hint: string]: unknown;
}

export interface ApiAnswer<T = unknown> {
  status: number;
  headers: HttpHeaders;
  url: string;
  /** parsed JSON (expect json), the text (text), a Uint8Array (bytes) or the response (response) */
  data: T;
}

export interface Api {
  /** one request; resolves to the answer, rejects with the mapped Error on anything but 2xx */
  request<T = unknown>(
    ctx: PluginContext,
    method: string,
    path: string,
    options: RequestOptions,
  ): Promise<ApiAnswer<T>>;
  /** one request whose JSON answer is all the caller needs ({} for an empty body) */
  json<T = Record<string, unknown>>(
    ctx: PluginContext,
    method: string,
    path: string,
    options: RequestOptions,
  ): Promise<T>;
}

/** Retry-After as whole seconds: a delay in seconds, or an HTTP date from now. */
export function retryAfterSeconds(value: string | null | undefined, now = Date.now()): number | undefined {
  if (value === null || value === undefined) return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v);
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/** The usual places a JSON error body names its problem. */
export function describeError(data: unknown, text: string): string {
  if (data === undefined) return text.trim().slice(0, 500);
  if (typeof data !== 'object' || data === null) return '';
  const d = data as Record<string, unknown>;
  const errors = Array.isArray(d['errors'])
    ? d['errors']
        .map((e) =>
          typeof e === 'string'
            ? e
            : typeof (e as { message?: unknown })?.message === 'string'
              ? (e as { message: string }).message
              : '',
        )
        .filter(Boolean)
    : [];
  const candidates = [
    d['message'],
    d['error_description'],
    errors.join('; '),
    typeof d['error'] === 'object' && d['error'] !== null ? (d['error'] as { message?: unknown }).message : d['error'],
  ];
  const found = candidates.find((c): c is string => typeof c === 'string' && c.trim() !== '');
  return (found ?? '').trim().slice(0, 1000);
}

function parseJson(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The default words for a failed answer; `integration` names what to reconnect. */
export function defaultFailure(f: ApiFailure, provider: string, integration: string): UpstreamError {
  const said = f.detail ? ` ${provider} said: ${f.detail}.` : '';
  const status = f.status;
  let message: string;
  if (status === 429) {
    const wait = f.retryAfterSec !== undefined ? `retry after ${f.retryAfterSec} seconds` : 'wait a minute and retry';
    message = `${provider} rate limited the request to ${f.action} (429): ${wait}.`;
  } else if (status === 401)
    message = `${provider} rejected the credential (401) while trying to ${f.action}: reconnect ${integration}.${said}`;
  else if (status === 403)
    message = `${provider} refused permission to ${f.action} (403): ${f.detail || 'the connected account may not do this'}.`;
  else if (status === 404)
    message = `${provider} found nothing while trying to ${f.action} (404): ${f.detail || 'it does not exist, or the connected account cannot see it'}.`;
  else if (status === 400 || status === 409 || status === 422)
    message = `${provider} refused to ${f.action} (${status}): ${f.detail || 'the request was not valid'}.`;
  else if (status >= 500)
    message = `${provider} had a server error (${status}) while trying to ${f.action}: retry later.${said}`;
  else message = `${provider} answered HTTP ${status} while trying to ${f.action}.${said}`;
  return new UpstreamError(message, status, f.retryAfterSec);
}

/** The default words for the gateway's refusals that a plugin can act on; else the error as it is. */
export function defaultBridgeFailure(f: BridgeFailure, provider: string): Error {
  let message: string;
  if (f.code === 'GW_ERR_BRIDGE_RESPONSE_TOO_LARGE') {
    message = `${provider}'s answer is larger than the gateway accepts (GW_ERR_BRIDGE_RESPONSE_TOO_LARGE) while trying to ${f.action}: ask for less (a smaller limit, where the tool takes one).`;
  } else if (f.code === 'GW_ERR_BRIDGE_TIMEOUT') {
    const then =
      f.method === 'GET' || f.method === 'HEAD'
        ? ' Try again in a moment.'
        : ' It may still have been done: check before trying again.';
    message = `${provider} did not answer in time (GW_ERR_BRIDGE_TIMEOUT) while trying to ${f.action}.${then}`;
  } else {
    return f.error;
  }
  return Object.assign(new Error(message), { code: f.code });
}

function isHttpError(err: unknown): err is HttpError {
  return (
    typeof err === 'object' &&
    err !== null &&
    typeof (err as { code?: unknown }).code === 'string' &&
    (err as { code: string }).code.startsWith('GW_ERR_BRIDGE_')
  );
}

/** The request a call sends: the API's default headers under the call's own, and its body (JSON unless raw). */
function requestInit(
  api: ApiOptions,
  method: string,
  options: RequestOptions,
): { method: string; headers: Record<string, string>; body?: string | Uint8Array } {
  const headers: Record<string, string> = { accept: 'application/json', ...api.headers, ...options.headers };
  if (options.accept !== undefined) headers['accept'] = options.accept;
  if (options.rawBody !== undefined) {
    if (options.contentType !== undefined) headers['content-type'] = options.contentType;
    return { method, headers, body: options.rawBody };
  }
  if (options.body === undefined) return { method, headers };
  headers['content-type'] = options.contentType ?? 'application/json';
  return { method, headers, body: JSON.stringify(api.wrapBody ? api.wrapBody(options.body) : options.body) };
}

/** Sends through ctx.http; a refusal by the gateway becomes the plugin's (or the default) Error. */
async function send(
  api: ApiOptions,
  ctx: PluginContext,
  method: string,
  url: string,
  options: RequestOptions,
): Promise<HttpResponse> {
  try {
    return await ctx.http(url, requestInit(api, method, options));
  } catch (err) {
    if (!isHttpError(err)) throw err;
    const failure: BridgeFailure = { code: err.code, error: err, method, action: options.action, options };
    throw api.bridgeFailure?.(failure) ?? defaultBridgeFailure(failure, api.provider);
  }
}

/** Throws the Error for a failed answer: the plugin's own mapping, or the default one. */
async function failWith(
  api: ApiOptions,
  integration: string,
  describe: NonNullable<ApiOptions['describe']>,
  res: HttpResponse,
  method: string,
  url: string,
  options: RequestOptions,
): Promise<never> {
  const text = await res.text();
  const data = parseJson(text);
  const retryAfter = res.headers.get('retry-after');
  const failure: ApiFailure = {
    status: res.status,
    statusText: res.statusText,
    headers: res.headers,
    text,
    data,
    detail: describe(data, text).replace(/[.\s]+$/, ''),
    retryAfter,
    retryAfterSec: retryAfterSeconds(retryAfter),
    method,
    url,
    action: options.action,
    options,
  };
  throw api.failure?.(failure) ?? defaultFailure(failure, api.provider, integration);
}

/** A successful answer's body, read the way the call expects it. */
async function answerBody(api: ApiOptions, res: HttpResponse, options: RequestOptions): Promise<unknown> {
  const expect = options.expect ?? 'json';
  if (expect === 'response') return res;
  if (expect === 'bytes') return res.bytes();
  const text = await res.text();
  if (expect === 'text') return text;
  if (!text) return undefined;
  const data = parseJson(text);
  if (data !== undefined || options.lenient) return data ?? text;
  throw new UpstreamError(
    `${api.provider} answered ${res.status} with something that is not JSON while trying to ${options.action}.`,
    res.status,
  );
}

/**
 * The connection's own instance of the provider ("https://gitlab.example.com", no trailing slash),
 * for an integration whose manifest declares `auth.instance`; `fallback` (the provider's own
 * service, the instance's `default`) when the connection names none. The gateway sends requests to
 * it as to a declared host, and sends the credential there and nowhere else.
 */
export function instanceUrl(ctx: PluginContext, fallback: string): string {
  const given = ctx.config['instanceUrl'];
  return typeof given === 'string' && given !== '' ? given.replace(/\/+$/, '') : fallback;
}

/** A client for one provider's API; see ApiOptions. */
export function createApi(api: ApiOptions): Api {
  const integration = api.integration ?? api.provider.toLowerCase();
  const describe = api.describe ?? describeError;

  async function request<T>(
    ctx: PluginContext,
    method: string,
    path: string,
    options: RequestOptions,
  ): Promise<ApiAnswer<T>> {
    const base = typeof api.base === 'function' ? api.base(ctx) : api.base;
    const url = `${/^https?:\/\//i.test(path) ? path : base + path}${queryString(options.query)}`;
    const res = await send(api, ctx, method, url, options);
    if (!res.ok) return failWith(api, integration, describe, res, method, url, options);
    return { status: res.status, headers: res.headers, url: res.url, data: (await answerBody(api, res, options)) as T };
  }

  async function json<T>(ctx: PluginContext, method: string, path: string, options: RequestOptions): Promise<T> {
    const answer = await request<unknown>(ctx, method, path, { ...options, expect: 'json' });
    return (answer.data !== null && typeof answer.data === 'object' ? answer.data : {}) as T;
  }

  return { request, json };
}
