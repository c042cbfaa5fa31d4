/**
 * @module host/portal/sso/oidc-client
 * The OpenID Connect relying party, on openid-client (no protocol code of our own): discovery of
 * the provider (once, again after a failure), the authorization request with state, nonce and PKCE
 * (S256), and the callback: the authorization code exchanged, the ID token validated by the library
 * (issuer, audience, expiry, nonce, and its signature against the provider's keys), UserInfo read
 * for the claims the ID token left out.
 *
 * The sign-in in progress is kept by the browser that started it, in a cookie (state, nonce, PKCE
 * verifier, when it began, where to go after): the callback may reach any replica, and an answer
 * from the provider that another browser started (login CSRF: someone else's code sent to you)
 * finds no matching state here and is refused.
 */
import * as client from 'openid-client';
import { fail, type WorkbenchError } from '../../../contracts/errors.js';
import type { SsoClaims } from '../../policy/sign-in.js';
import { SSO_SIGN_IN_TTL_MS, type SsoProviderConfig } from './sso-config.js';

/** Seconds each request to the provider may take. */
const PROVIDER_TIMEOUT_SEC = 15;

/** What the provider says about the person who signed in. */
export interface SsoIdentity {
  /** the ID token's `iss` */
  issuer: string;
  /** the ID token's `sub`: who the person is at the provider */
  subject: string;
  claims: SsoClaims;
}

/** Where a failure is logged: what the provider answered, for the operator. */
export interface SsoLogger {
  warn(obj: object, msg?: string): void;
}

type SsoFailure = 'GW_ERR_SSO_PROVIDER_UNAVAILABLE' | 'GW_ERR_SSO_RESPONSE_INVALID' | 'GW_ERR_SSO_PROVIDER_REFUSED';

/** The sign-in a browser started, as its cookie holds it. */
interface Started {
  state: string;
  nonce: string;
  verifier: string;
  startedAt: number;
  next: string;
}

const PART = /^[A-Za-z0-9_-]{16,200}$/;

export class OidcSignIn {
  readonly displayName: string;
  readonly redirectUri: string;
  readonly #config: SsoProviderConfig;
  readonly #logger: SsoLogger | undefined;
  #discovered: Promise<client.Configuration> | undefined;

  constructor(config: SsoProviderConfig, redirectUri: string, logger?: SsoLogger) {
    this.#config = config;
    this.displayName = config.displayName;
    this.redirectUri = redirectUri;
    this.#logger = logger;
  }

  /** The provider's configuration, discovered once; a failed discovery is tried again by the next sign-in. */
  discover(): Promise<client.Configuration> {
    this.#discovered ??= this.#discoverOnce().catch((err: unknown) => {
      this.#discovered = undefined;
      this.#logger?.warn(
        { issuer: this.#config.issuer, error: describe(err) },
        'single sign-on: the provider could not be discovered',
      );
      throw refusal('GW_ERR_SSO_PROVIDER_UNAVAILABLE', 'The identity provider cannot be reached just now.');
    });
    return this.#discovered;
  }

  async #discoverOnce(): Promise<client.Configuration> {
    const c = this.#config;
    const execute = [client.enableNonRepudiationChecks, ...(c.insecureLoopback ? [client.allowInsecureRequests] : [])];
    return client.discovery(
      new URL(c.issuer),
      c.clientId,
      c.clientSecret,
      c.clientSecret === undefined ? client.None() : undefined,
      { execute, timeout: PROVIDER_TIMEOUT_SEC },
    );
  }

  /** Starts a sign-in: the provider's authorization URL, and the cookie value this browser keeps until the callback. */
  async start(next: string, now: number): Promise<{ url: string; cookie: string }> {
    const config = await this.discover();
    const started: Started = {
      state: client.randomState(),
      nonce: client.randomNonce(),
      verifier: client.randomPKCECodeVerifier(),
      startedAt: now,
      next,
    };
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: this.redirectUri,
      scope: this.#config.scopes.join(' '),
      state: started.state,
      nonce: started.nonce,
      code_challenge: await client.calculatePKCECodeChallenge(started.verifier),
      code_challenge_method: 'S256',
    });
    return { url: url.href, cookie: encodeStarted(started) };
  }

  /** Where the browser wanted to go, if its cookie holds a sign-in (for the pages of a refused one). */
  nextOf(cookie: string | undefined): string | undefined {
    return decodeStarted(cookie)?.next;
  }

  /**
   * Finishes a sign-in from the provider's answer (`callback`, the URL it sent the browser to) and
   * the browser's cookie. Resolves who signed in and where they wanted to go; throws a WorkbenchError
   * of GW_ERR_SSO_RESPONSE_INVALID, GW_ERR_SSO_PROVIDER_REFUSED or GW_ERR_SSO_PROVIDER_UNAVAILABLE.
   */
  async finish(callback: URL, cookie: string | undefined, now: number): Promise<SsoIdentity & { next: string }> {
    const started = decodeStarted(cookie);
    const state = callback.searchParams.get('state');
    if (!started || now - started.startedAt > SSO_SIGN_IN_TTL_MS || now < started.startedAt)
      throw refusal(
        'GW_ERR_SSO_RESPONSE_INVALID',
        'This sign-in was not started in this browser, or took longer than 10 minutes. Start again from the sign-in page.',
      );
    if (state !== started.state)
      throw refusal(
        'GW_ERR_SSO_RESPONSE_INVALID',
        'This answer from the identity provider belongs to another sign-in (another tab may have started one since). Start again from the sign-in page.',
      );
    const error = callback.searchParams.get('error');
    if (error !== null) throw providerRefused(error, callback.searchParams.get('error_description'));
    const config = await this.discover();
    try {
      const tokens = await client.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: started.verifier,
        expectedState: started.state,
        expectedNonce: started.nonce,
        idTokenExpected: true,
      });
      const idClaims = tokens.claims();
      if (!idClaims) throw refusal('GW_ERR_SSO_RESPONSE_INVALID', 'The identity provider sent no ID token.');
      const userinfo = config.serverMetadata().userinfo_endpoint
        ? await client.fetchUserInfo(config, tokens.access_token, idClaims.sub)
        : {};
      // the ID token's claims were checked and signed: they win over UserInfo's
      return { issuer: idClaims.iss, subject: idClaims.sub, claims: { ...userinfo, ...idClaims }, next: started.next };
    } catch (err) {
      throw this.#classify(err);
    }
  }

  /** A failure of the exchange as the person's page says it; the details go to the log. */
  #classify(err: unknown): WorkbenchError {
    if (isRefusal(err)) return err;
    const code = failureOf(err);
    this.#logger?.warn(
      { issuer: this.#config.issuer, code, error: describe(err) },
      'single sign-on: the answer from the provider was refused',
    );
    return code === 'GW_ERR_SSO_PROVIDER_UNAVAILABLE'
      ? refusal(code, 'The identity provider could not complete the sign-in just now.')
      : refusal(
          'GW_ERR_SSO_RESPONSE_INVALID',
          "The identity provider's answer did not pass Workbench's checks, so you were not signed in. Start again from the sign-in page.",
        );
  }
}

const refusal = (code: SsoFailure, message: string): WorkbenchError<SsoFailure> => fail(code, { message });

function isRefusal(err: unknown): err is WorkbenchError {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('GW_ERR_SSO_');
}

function providerRefused(error: string, description: string | null): WorkbenchError {
  const clean = (s: string, n: number): string => s.replace(/[^\x20-\x7e]/g, '').slice(0, n);
  return refusal(
    'GW_ERR_SSO_PROVIDER_REFUSED',
    error === 'access_denied'
      ? 'The sign-in was cancelled or refused at the identity provider.'
      : `The identity provider answered "${clean(error, 60)}"${description ? `: ${clean(description, 200)}` : ''}.`,
  );
}

/** Whether a failure is the provider being unreachable or broken (retry later) or its answer refused. */
function failureOf(err: unknown): SsoFailure {
  const name = (err as { name?: unknown } | null)?.name;
  // fetch failed (TypeError), or the request timed out or was aborted
  if (err instanceof TypeError || name === 'TimeoutError' || name === 'AbortError')
    return 'GW_ERR_SSO_PROVIDER_UNAVAILABLE';
  if (err instanceof client.ResponseBodyError)
    return err.status >= 500 ? 'GW_ERR_SSO_PROVIDER_UNAVAILABLE' : 'GW_ERR_SSO_RESPONSE_INVALID';
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 'OAUTH_RESPONSE_IS_NOT_CONFORM' || code === 'OAUTH_RESPONSE_IS_NOT_JSON')
    return 'GW_ERR_SSO_PROVIDER_UNAVAILABLE';
  return 'GW_ERR_SSO_RESPONSE_INVALID';
}

function describe(err: unknown): string {
  const e = err as { message?: unknown; code?: unknown; error?: unknown; cause?: { message?: unknown } } | null;
  const parts = [e?.code, e?.error, e?.message, e?.cause?.message].filter((p) => typeof p === 'string');
  return parts.join(': ').slice(0, 500);
}

function encodeStarted(s: Started): string {
  const next = Buffer.from(s.next, 'utf8').toString('base64url');
  return ['s1', s.state, s.nonce, s.verifier, s.startedAt.toString(36), next].join('.');
}

function decodeStarted(cookie: string | undefined): Started | undefined {
  const [v, state, nonce, verifier, at, next] = (cookie ?? '').split('.');
  if (v !== 's1' || !state || !nonce || !verifier || !at || next === undefined) return undefined;
  if (![state, nonce, verifier].every((p) => PART.test(p)) || !/^[0-9a-z]{1,12}$/.test(at)) return undefined;
  return { state, nonce, verifier, startedAt: parseInt(at, 36), next: Buffer.from(next, 'base64url').toString('utf8') };
}
