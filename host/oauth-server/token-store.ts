/**
 * @module host/oauth-server/token-store
 * How codes, grants and tokens are made, in the database so that every replica sees each issue,
 * use and revocation at once. How a grant is used and ended (the access token check, revocation,
 * the person's list) is host/oauth-server/grants.ts.
 *
 * A consent makes a single-use authorization code (CODE_TTL_MS). Exchanging it makes a grant: the
 * family of tokens that consent produced. An access token lives accessTokenTtlSec; a refresh token
 * is spent by its one refresh, which issues the next pair (rotation). Presenting a spent refresh
 * token, or a used code, means two parties hold it: the whole grant is revoked (RFC 9700 §4.14.2),
 * and the revocation commits even though the request is refused. The refusals are the RFC's
 * (invalid_grant, invalid_target, invalid_scope), thrown as OAuthRefusal.
 *
 * A grant made in a portal session signed in with an API key records that key: revoking the key
 * ends the grant, as it ends the keys made with it (host/storage/users.ts). A user holds at most
 * MAX_LIVE_GRANTS live grants; a new one past it revokes the least recently used.
 */
import { randomUUID } from 'node:crypto';
import type { Db } from '../storage/db.js';
import { lockUserRow } from '../storage/users.js';
import { GRANT_LIVE, revokeGrantIn } from './grants.js';
import { refuse, type OAuthRefusal } from './oauth-error.js';
import {
  ACCESS_TOKEN_PREFIX,
  CODE_PREFIX,
  REFRESH_TOKEN_PREFIX,
  hashOf,
  newSecret,
  verifierMatches,
} from './secrets.js';

export const CODE_TTL_MS = 60_000;
export const MAX_LIVE_GRANTS = 50;

export interface TokenLifetimes {
  accessSec: number;
  refreshSec: number;
}

/** What a consent grants, to be carried by its code. */
export interface CodeRequest {
  clientId: string;
  clientName: string;
  userId: string;
  /** the API key the consenting portal session signed in with, if any */
  keyId: string | null;
  redirectUri: string;
  codeChallenge: string;
  resource: string;
  scope: string;
  /** whether the client may use refresh tokens (its grant_types) */
  refreshable: boolean;
}

/** The token response (RFC 6749 §5.1). */
export interface TokenSet {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token?: string;
  scope: string;
}

/** A refusal decided inside a transaction that must still commit (a revocation it made). */
type Outcome = { tokens: TokenSet } | { refusal: OAuthRefusal };

interface CodeRow {
  client_id: string;
  client_name: string;
  user_id: string;
  key_id: string | null;
  redirect_uri: string;
  code_challenge: string;
  resource: string;
  scope: string;
  refreshable: number;
  expires_at: number;
  used_at: number | null;
  grant_id: string | null;
}

interface RefreshRow {
  grant_id: string;
  expires_at: number;
  used_at: number | null;
  revoked_at: number | null;
  client_id: string;
  grant_revoked_at: number | null;
  resource: string;
  scope: string;
  refreshable: number;
  key_live: number;
}

export class TokenStore {
  readonly #db: Db;
  readonly #now: () => number;
  readonly ttl: TokenLifetimes;

  constructor(db: Db, ttl: TokenLifetimes, now: () => number = Date.now) {
    this.#db = db;
    this.ttl = ttl;
    this.#now = now;
  }

  /** Stores a consent as a code and returns the code (shown once, in the redirect). */
  async issueCode(r: CodeRequest): Promise<string> {
    const code = newSecret(CODE_PREFIX);
    const now = this.#now();
    await this.#db.run(
      `INSERT INTO oauth_codes (code_hash, client_id, client_name, user_id, key_id, redirect_uri, code_challenge, resource, scope, refreshable, created_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        hashOf(code),
        r.clientId,
        r.clientName,
        r.userId,
        r.keyId,
        r.redirectUri,
        r.codeChallenge,
        r.resource,
        r.scope,
        r.refreshable ? 1 : 0,
        now,
        now + CODE_TTL_MS,
      ],
    );
    return code;
  }

  /** The authorization_code grant (RFC 6749 §4.1.3, RFC 7636 §4.6, RFC 8707 §2.2). */
  async exchangeCode(p: {
    code: string;
    clientId: string;
    redirectUri: string;
    codeVerifier: string;
    resource: string | undefined;
    /** this server's resource: a code or grant for another (a server under another name on the same database) is refused */
    audience: string;
  }): Promise<TokenSet> {
    return settle(await this.#db.transaction(async (tx) => this.#exchange(tx, p)));
  }

  async #exchange(tx: Db, p: Parameters<TokenStore['exchangeCode']>[0]): Promise<Outcome> {
    const now = this.#now();
    const hash = hashOf(p.code);
    const row = await tx.get<CodeRow>('SELECT * FROM oauth_codes WHERE code_hash = ?', [hash]);
    if (!row) return refused('invalid_grant', 'The authorization code is unknown.');
    if (row.used_at !== null) {
      if (row.grant_id !== null) await revokeGrantIn(tx, row.grant_id, 'code-reused', now);
      return refused('invalid_grant', 'The authorization code was already used: the tokens issued for it are revoked.');
    }
    if (Number(row.expires_at) <= now) return refused('invalid_grant', 'The authorization code has expired.');
    if (row.client_id !== p.clientId)
      return refused('invalid_grant', 'The authorization code was issued to another client.');
    if (row.redirect_uri !== p.redirectUri)
      return refused('invalid_grant', 'redirect_uri is not the one of the authorization request.');
    if (!verifierMatches(p.codeVerifier, row.code_challenge))
      return refused('invalid_grant', 'code_verifier does not match the code_challenge (PKCE S256).');
    if (row.resource !== p.audience)
      return refused('invalid_grant', `The code was issued for ${row.resource}, not for this server.`);
    if (p.resource !== undefined && p.resource !== row.resource)
      return refused('invalid_target', `resource must be ${row.resource}, the resource the code was issued for.`);
    if (row.key_id !== null && !(await keyLive(tx, row.key_id)))
      return refused('invalid_grant', 'The API key the consent was given with has been revoked.');
    const grantId = randomUUID();
    const taken = await tx.run(
      'UPDATE oauth_codes SET used_at = ?, grant_id = ? WHERE code_hash = ? AND used_at IS NULL',
      [now, grantId, hash],
    );
    if (taken.changes !== 1) return refused('invalid_grant', 'The authorization code was already used.');
    await lockUserRow(tx, row.user_id);
    await tx.run(
      `INSERT INTO oauth_grants (id, user_id, client_id, client_name, redirect_uri, resource, scope, refreshable, key_id, created_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        grantId,
        row.user_id,
        row.client_id,
        row.client_name,
        row.redirect_uri,
        row.resource,
        row.scope,
        row.refreshable,
        row.key_id,
        now,
        now + 1000 * (row.refreshable ? this.ttl.refreshSec : this.ttl.accessSec),
      ],
    );
    await this.#revokeBeyondLimit(tx, row.user_id, now);
    return { tokens: await issueTokens(tx, grantId, row.refreshable === 1, row.scope, this.ttl, now) };
  }

  /** The user's least recently used live grants past MAX_LIVE_GRANTS (the new one kept) are revoked. */
  async #revokeBeyondLimit(tx: Db, userId: string, now: number): Promise<void> {
    const live = await tx.all<{ id: string }>(
      `SELECT g.id FROM oauth_grants g WHERE g.user_id = ? AND ${GRANT_LIVE}
       ORDER BY COALESCE(g.last_used_at, g.created_at) DESC, g.created_at DESC`,
      [userId, now],
    );
    for (const { id } of live.slice(MAX_LIVE_GRANTS)) await revokeGrantIn(tx, id, 'limit', now);
  }

  /** The refresh_token grant with rotation (RFC 6749 §6, OAuth 2.1 §4.3.1). */
  async refresh(p: {
    refreshToken: string;
    clientId: string;
    resource: string | undefined;
    scope: string[] | undefined;
    audience: string;
  }): Promise<TokenSet> {
    return settle(await this.#db.transaction(async (tx) => this.#refresh(tx, p)));
  }

  async #refresh(tx: Db, p: Parameters<TokenStore['refresh']>[0]): Promise<Outcome> {
    const now = this.#now();
    const hash = hashOf(p.refreshToken);
    const row = await tx.get<RefreshRow>(
      `SELECT t.grant_id, t.expires_at, t.used_at, t.revoked_at, g.client_id, g.revoked_at AS grant_revoked_at,
              g.resource, g.scope, g.refreshable,
              CASE WHEN g.key_id IS NULL OR EXISTS (SELECT 1 FROM api_keys k WHERE k.id = g.key_id AND k.revoked_at IS NULL)
                   THEN 1 ELSE 0 END AS key_live
         FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id WHERE t.token_hash = ? AND t.kind = 'refresh'`,
      [hash],
    );
    if (!row) return refused('invalid_grant', 'The refresh token is unknown.');
    if (row.client_id !== p.clientId)
      return refused('invalid_grant', 'The refresh token was issued to another client.');
    if (row.grant_revoked_at !== null) return refused('invalid_grant', 'The grant was revoked: authorize again.');
    if (row.used_at !== null) {
      await revokeGrantIn(tx, row.grant_id, 'refresh-reused', now);
      return refused(
        'invalid_grant',
        'The refresh token was already used: the grant is revoked, as a refresh token presented twice may have been stolen. Authorize again.',
      );
    }
    if (row.revoked_at !== null || Number(row.expires_at) <= now)
      return refused('invalid_grant', 'The refresh token has expired or was revoked.');
    if (Number(row.key_live) !== 1)
      return refused('invalid_grant', 'The API key the consent was given with has been revoked.');
    if (row.resource !== p.audience)
      return refused('invalid_grant', `The grant is for ${row.resource}, not for this server.`);
    if (p.resource !== undefined && p.resource !== row.resource)
      return refused('invalid_target', `resource must be ${row.resource}, the resource of the grant.`);
    const granted = new Set(row.scope.split(' '));
    if (p.scope && p.scope.some((s) => !granted.has(s)))
      return refused('invalid_scope', `A refresh may ask for the granted scope (${row.scope}) or less.`);
    const spent = await tx.run('UPDATE oauth_tokens SET used_at = ? WHERE token_hash = ? AND used_at IS NULL', [
      now,
      hash,
    ]);
    if (spent.changes !== 1) {
      // another refresh with the same token won the race: two holders, as above
      await revokeGrantIn(tx, row.grant_id, 'refresh-reused', now);
      return refused('invalid_grant', 'The refresh token was already used: the grant is revoked.');
    }
    return { tokens: await issueTokens(tx, row.grant_id, row.refreshable === 1, row.scope, this.ttl, now) };
  }
}

function refused(error: 'invalid_grant' | 'invalid_target' | 'invalid_scope', description: string): Outcome {
  return { refusal: refuse(error, description) };
}

/** The tokens of a transaction that committed, or its refusal thrown. */
function settle(outcome: Outcome): TokenSet {
  if ('refusal' in outcome) throw outcome.refusal;
  return outcome.tokens;
}

async function keyLive(tx: Db, keyId: string): Promise<boolean> {
  return (await tx.get('SELECT id FROM api_keys WHERE id = ? AND revoked_at IS NULL', [keyId])) !== undefined;
}

/** A new access token, and a refresh token when the grant may refresh (the grant then lives as long as it). */
async function issueTokens(
  tx: Db,
  grantId: string,
  refreshable: boolean,
  scope: string,
  ttl: TokenLifetimes,
  now: number,
): Promise<TokenSet> {
  const access = newSecret(ACCESS_TOKEN_PREFIX);
  await tx.run(
    "INSERT INTO oauth_tokens (token_hash, grant_id, kind, created_at, expires_at) VALUES (?, ?, 'access', ?, ?)",
    [hashOf(access), grantId, now, now + ttl.accessSec * 1000],
  );
  const set: TokenSet = { access_token: access, token_type: 'Bearer', expires_in: ttl.accessSec, scope };
  if (!refreshable) return set;
  const refresh = newSecret(REFRESH_TOKEN_PREFIX);
  const until = now + ttl.refreshSec * 1000;
  await tx.run(
    "INSERT INTO oauth_tokens (token_hash, grant_id, kind, created_at, expires_at) VALUES (?, ?, 'refresh', ?, ?)",
    [hashOf(refresh), grantId, now, until],
  );
  await tx.run('UPDATE oauth_grants SET expires_at = ? WHERE id = ?', [until, grantId]);
  return { ...set, refresh_token: refresh };
}
