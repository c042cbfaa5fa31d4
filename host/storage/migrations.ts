/**
 * @module host/storage/migrations
 * Versioned schema migrations, applied in order at start-up inside one transaction each. A
 * migration is never edited once released: add a new one. Types are kept portable (TEXT, INTEGER,
 * BIGINT) so the same statements run on SQLite and PostgreSQL. Times are epoch milliseconds.
 * What only PostgreSQL has (a function in PL/pgSQL) goes in a migration's `postgres` statements,
 * run after the shared ones on PostgreSQL alone.
 * Replicas may start together: each migration is applied under a lock and re-checked inside it.
 * One file on purpose (past 400 lines): the migrations are one ordered list, never edited, read in order.
 */
import type { Db } from './db.js';

export interface Migration {
  version: number;
  name: string;
  statements: string[];
  /** run on PostgreSQL only, after `statements` (no `?` inside: every statement goes through toPg) */
  postgres?: string[];
}

export const MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: 'users, api keys, audit, continuations',
    statements: [
      `CREATE TABLE users (
         id TEXT PRIMARY KEY, email TEXT NOT NULL UNIQUE, tenant TEXT NOT NULL,
         created_at BIGINT NOT NULL)`,
      `CREATE TABLE api_keys (
         id TEXT PRIMARY KEY, user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
         hash TEXT NOT NULL UNIQUE, prefix TEXT NOT NULL, label TEXT NOT NULL DEFAULT '',
         created_at BIGINT NOT NULL, last_used_at BIGINT, revoked_at BIGINT)`,
      `CREATE TABLE audit_events (
         id TEXT PRIMARY KEY, at BIGINT NOT NULL, action TEXT NOT NULL, tenant TEXT, user_id TEXT,
         tool TEXT, integration TEXT, success INTEGER NOT NULL, error_code TEXT, error TEXT,
         duration_ms INTEGER NOT NULL, transport TEXT, request_id TEXT, args TEXT)`,
      `CREATE INDEX audit_events_user_at ON audit_events(user_id, at)`,
      `CREATE INDEX audit_events_tenant_at ON audit_events(tenant, at)`,
      `CREATE TABLE result_continuations (
         id TEXT PRIMARY KEY, user_id TEXT NOT NULL, tool TEXT NOT NULL, body TEXT NOT NULL,
         created_at BIGINT NOT NULL, expires_at BIGINT NOT NULL)`,
      `CREATE INDEX result_continuations_expires ON result_continuations(expires_at)`,
    ],
  },
  {
    version: 2,
    name: 'connections, pending connects, portal sessions, login links',
    statements: [
      `CREATE TABLE connections (
         id TEXT PRIMARY KEY, user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
         integration TEXT NOT NULL, status TEXT NOT NULL, status_reason TEXT,
         secret TEXT NOT NULL, config TEXT NOT NULL DEFAULT '{}', expires_at BIGINT,
         scopes TEXT, key_id TEXT NOT NULL, created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL,
         version INTEGER NOT NULL DEFAULT 1,
         UNIQUE (user_id, integration))`,
      `CREATE TABLE pending_connects (
         id TEXT PRIMARY KEY, user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
         integration TEXT NOT NULL, type TEXT NOT NULL, state_hash TEXT NOT NULL UNIQUE,
         code_verifier TEXT, status TEXT NOT NULL, status_reason TEXT,
         created_at BIGINT NOT NULL, expires_at BIGINT NOT NULL, used_at BIGINT)`,
      `CREATE TABLE portal_sessions (
         id_hash TEXT PRIMARY KEY, user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
         csrf TEXT NOT NULL, created_at BIGINT NOT NULL, expires_at BIGINT NOT NULL, revoked_at BIGINT)`,
      `CREATE TABLE login_links (
         token_hash TEXT PRIMARY KEY, user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
         created_at BIGINT NOT NULL, expires_at BIGINT NOT NULL, used_at BIGINT)`,
    ],
  },
  {
    version: 3,
    name: 'connection refresh lease (single-flight refresh across replicas)',
    statements: [
      `ALTER TABLE connections ADD COLUMN refresh_lease_owner TEXT`,
      `ALTER TABLE connections ADD COLUMN refresh_lease_until BIGINT`,
      `CREATE INDEX pending_connects_user ON pending_connects(user_id, created_at)`,
    ],
  },
  {
    version: 4,
    name: 'portal sessions record the API key that signed them in',
    statements: [
      // NULL for a login-link session. A session whose key is revoked (or deleted) is no longer valid.
      `ALTER TABLE portal_sessions ADD COLUMN key_id TEXT REFERENCES api_keys(id) ON DELETE CASCADE`,
      // Sessions opened before this migration do not say which key signed them in, so revoking that
      // key could not end them: they end now and their users sign in again. (A migration has no
      // clock, so the end is dated at their start; either way, they are swept within a day.)
      `UPDATE portal_sessions SET revoked_at = created_at WHERE revoked_at IS NULL`,
    ],
  },
  {
    version: 5,
    name: 'continuations keep their part boundaries',
    statements: [
      // Where each part of the body ends, split once when stored, and the part budget it was split
      // for: continue_tool_result slices instead of splitting the whole body on every call. Rows
      // stored before this migration keep NULL and are split on read, as they always were.
      `ALTER TABLE result_continuations ADD COLUMN part_budget INTEGER`,
      `ALTER TABLE result_continuations ADD COLUMN part_ends TEXT`,
    ],
  },
  {
    version: 6,
    name: 'continuations kept a part per row',
    statements: [
      // A part is read without reading the whole body: paging a 32 MB result read all of it (and on
      // SQLite held the event loop ~40 ms) for every 58,000-character part. Results stored from now
      // on have their head here and each part in a row; result_continuations keeps the rows stored
      // before, served as they always were, and is where a replica of an earlier version (during a
      // rolling upgrade) looks: it does not see results stored this way (it answers "Unknown or
      // expired continuationId", never an empty result), and leaves their parts alone.
      `CREATE TABLE result_pages (
         id TEXT PRIMARY KEY, user_id TEXT NOT NULL, tool TEXT NOT NULL, part_budget INTEGER NOT NULL,
         total_chars BIGINT NOT NULL, total_parts INTEGER NOT NULL, created_at BIGINT NOT NULL, expires_at BIGINT NOT NULL)`,
      `CREATE INDEX result_pages_expires ON result_pages(expires_at)`,
      `CREATE TABLE result_page_parts (
         page_id TEXT NOT NULL, part INTEGER NOT NULL, chunk TEXT NOT NULL,
         PRIMARY KEY (page_id, part))`,
    ],
  },
  {
    version: 7,
    name: 'portal one-shot notices',
    statements: [
      // A notice (a new API key, "… was disconnected") left by a form post for the page it redirects
      // to, shown once in the session that made it (host/portal/flash.ts). The body is sealed with a
      // key derived from the session's cookie value, which is not stored.
      `CREATE TABLE portal_flash (
         id TEXT PRIMARY KEY, session_hash TEXT NOT NULL REFERENCES portal_sessions(id_hash) ON DELETE CASCADE,
         page TEXT NOT NULL, body TEXT NOT NULL, created_at BIGINT NOT NULL, expires_at BIGINT NOT NULL)`,
      `CREATE INDEX portal_flash_session ON portal_flash(session_hash, page)`,
      `CREATE INDEX portal_flash_expires ON portal_flash(expires_at)`,
    ],
  },
  {
    version: 8,
    name: 'settings (the key the last keys rotate moved the connections to)',
    statements: [
      // Small named values shared by every server on the database. `encryption.rotated_to` is the
      // id of the key `workbench keys rotate` last re-encrypted the connections under: `keys reseal`
      // refuses to run with another current key (it would move every connection back to the old
      // key), and start-up warns a server that runs with another key.
      `CREATE TABLE settings (name TEXT PRIMARY KEY, value TEXT NOT NULL, updated_at BIGINT NOT NULL)`,
    ],
  },
  {
    version: 9,
    name: 'connections record when they were last (re)connected',
    statements: [
      // updated_at moves on every token refresh and status change; connected_at only when the
      // connection is made or remade (the OAuth callback, the API-key form, `connections import`),
      // so wait_for_connection can tell "the user connected another way" from "a refresh ran".
      // A row written by a replica of an earlier version (a rolling upgrade) has none: it reads as
      // its created_at.
      `ALTER TABLE connections ADD COLUMN connected_at BIGINT`,
      `UPDATE connections SET connected_at = created_at`,
    ],
  },
  {
    version: 10,
    name: 'stored results looked up by user (the per-user quota)',
    statements: [
      // resultCap.maxStoredCharsPerUser sums a user's live stored results before each store
      `CREATE INDEX result_pages_user ON result_pages(user_id, expires_at)`,
      `CREATE INDEX result_continuations_user ON result_continuations(user_id, expires_at)`,
    ],
  },
  {
    version: 11,
    name: 'execution rate limits shared by replicas (PostgreSQL)',
    statements: [
      // One row per budget being spent: `name` is "u:<user id>" or "t:<tenant>", `window_start`
      // the start of its window in epoch milliseconds on the database's clock, `spent` the
      // executions taken in it. Written on PostgreSQL only (host/engine/shared-rate-limit.ts); a
      // single SQLite server counts in memory and leaves the table empty.
      `CREATE TABLE rate_limit_windows (name TEXT PRIMARY KEY, window_start BIGINT NOT NULL, spent BIGINT NOT NULL)`,
    ],
    postgres: [
      // Takes one execution from each budget named (a NULL name is no budget), in one statement
      // and one round trip: NULL when taken, else the milliseconds until the window that refused
      // it ends, with nothing spent. Both rows are spent in name order (every take locks them in
      // that order: no deadlock) and locked until the call ends, so a replica racing for the same
      // budget waits and then counts what this one spent. A row whose window is neither the
      // current one nor the next (a take that read the clock a moment later started it) starts
      // the current one afresh, so a database clock stepped either way strands no budget. Over a
      // limit, both rows are given back before anyone else can see them. The check reads the rows
      // this call just wrote (its own writes are visible to it at any isolation level). Written
      // for READ COMMITTED, PostgreSQL's default: under a stricter default_transaction_isolation a
      // take racing another for a row fails with a serialization error, and the caller retries it.
      // Its commit does not wait for the WAL to reach disk (synchronous_commit off for this
      // transaction alone): a count lost in a server crash is harmless, and the rows' locks, which
      // every take of the same tenant waits for, are held for microseconds instead of a disk flush.
      `CREATE FUNCTION workbench_rate_limit_take(tenant_name TEXT, tenant_limit BIGINT, user_name TEXT, user_limit BIGINT, window_ms BIGINT)
       RETURNS BIGINT LANGUAGE plpgsql VOLATILE AS $fn$
       DECLARE
         now_ms BIGINT := floor(extract(epoch FROM clock_timestamp()) * 1000);
         win BIGINT := now_ms - now_ms % window_ms;
         wait_ms BIGINT;
       BEGIN
         PERFORM set_config('synchronous_commit', 'off', true);
         INSERT INTO rate_limit_windows AS w (name, window_start, spent)
           SELECT n, win, 1 FROM unnest(ARRAY[tenant_name, user_name]) AS n WHERE n IS NOT NULL ORDER BY n
         ON CONFLICT (name) DO UPDATE SET
           spent = CASE WHEN w.window_start IN (win, win + window_ms) THEN w.spent + 1 ELSE 1 END,
           window_start = CASE WHEN w.window_start IN (win, win + window_ms) THEN w.window_start ELSE win END;
         now_ms := floor(extract(epoch FROM clock_timestamp()) * 1000);
         SELECT max(least(w.window_start + window_ms - now_ms, window_ms)) INTO wait_ms FROM rate_limit_windows w
           WHERE (w.name = tenant_name AND w.spent > tenant_limit) OR (w.name = user_name AND w.spent > user_limit);
         IF wait_ms IS NOT NULL THEN
           UPDATE rate_limit_windows SET spent = spent - 1 WHERE name IN (tenant_name, user_name);
           RETURN greatest(wait_ms, 0);
         END IF;
         RETURN NULL;
       END
       $fn$`,
    ],
  },
  {
    version: 12,
    name: 'sandbox crash strikes shared by replicas (PostgreSQL)',
    statements: [
      // One row per crash a plugin was blamed for (host/supervisor/quarantine.ts): its name,
      // version and source hash (strikes add up per name and hash), the sandbox that recorded it
      // (`origin`, a random id per replica start: a replica reads the others' rows) and when, in
      // epoch milliseconds on the database's clock. Rows older than sandbox.quarantineWindowMs are
      // deleted as replicas read. Written on PostgreSQL only (host/storage/sandbox-strikes.ts); a
      // single SQLite server counts strikes in memory and leaves the table empty.
      `CREATE TABLE sandbox_strikes (
         id TEXT PRIMARY KEY, plugin TEXT NOT NULL, version TEXT NOT NULL, source_hash TEXT NOT NULL,
         origin TEXT NOT NULL, at BIGINT NOT NULL)`,
      `CREATE INDEX sandbox_strikes_at ON sandbox_strikes(at)`,
    ],
  },
  {
    version: 13,
    name: 'API keys record what created them (revoking a key revokes the keys made with it)',
    statements: [
      // `created_via`: 'key' (in a portal session signed in with the key `created_with_key_id`),
      // 'link' (in a portal session opened with a one-time sign-in link) or 'operator' (the CLI, the
      // first start, an embedder). Revoking a key revokes every key made in a session signed in with
      // it, and so on down the chain (UserStore.revokeApiKey): a leaked key cannot leave keys behind
      // it. Keys made before this migration keep NULL in both (their origin was not recorded) and
      // are revoked only on their own. A parent key is never deleted while keys made with it remain
      // (the reference); a user's keys go together with the user.
      `ALTER TABLE api_keys ADD COLUMN created_with_key_id TEXT REFERENCES api_keys(id)`,
      `ALTER TABLE api_keys ADD COLUMN created_via TEXT`,
      `CREATE INDEX api_keys_created_with ON api_keys(created_with_key_id)`,
    ],
  },
  {
    version: 14,
    name: 'audit events found by age (audit.retentionDays)',
    statements: [
      // The retention sweep (host/audit/retention.ts) takes the oldest rows before a cutoff, a
      // batch at a time; the indexes of migration 1 lead with user_id and tenant, so without this
      // each batch read the whole table. IF NOT EXISTS: an operator of a large PostgreSQL table
      // may build it beforehand with CREATE INDEX CONCURRENTLY (docs/operations.md), and this
      // migration then leaves it as it is instead of blocking audit writes while it builds.
      `CREATE INDEX IF NOT EXISTS audit_events_at ON audit_events(at)`,
    ],
  },
  {
    version: 15,
    name: 'jots: the static sites agents publish, their files and view links',
    statements: [
      // A site (host/builtins/jots): a random id, its owner (a site goes with its user) and the
      // owner's tenant, a title, the SHA-256 of its share token when it is shared (the token itself
      // is shown once and never stored), and the count and decoded bytes of its files, kept with
      // each write so the per-user quota is one SUM over the user's sites.
      `CREATE TABLE jot_sites (
         id TEXT PRIMARY KEY, owner_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
         tenant TEXT NOT NULL, title TEXT NOT NULL DEFAULT '', share_hash TEXT UNIQUE, shared_at BIGINT,
         file_count INTEGER NOT NULL, bytes BIGINT NOT NULL, created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL)`,
      `CREATE INDEX jot_sites_owner ON jot_sites(owner_id, created_at)`,
      // One file of a site: its normalised path, the Content-Type chosen from its extension, its
      // decoded size and SHA-256 (the ETag), and its bytes as base64 text (portable: the storage
      // interface binds text, not blobs, on both databases).
      `CREATE TABLE jot_files (
         site_id TEXT NOT NULL REFERENCES jot_sites(id) ON DELETE CASCADE, path TEXT NOT NULL,
         content_type TEXT NOT NULL, bytes BIGINT NOT NULL, sha256 TEXT NOT NULL, content TEXT NOT NULL,
         updated_at BIGINT NOT NULL, PRIMARY KEY (site_id, path))`,
      // A view link: the owner, signed in to the portal in a browser, is sent to the site under a
      // random token in the path (a sandboxed page's own requests carry no cookie). Its hash only;
      // kept a day past its end, so that an expired link sends the browser to sign in again.
      `CREATE TABLE jot_views (
         token_hash TEXT PRIMARY KEY, site_id TEXT NOT NULL REFERENCES jot_sites(id) ON DELETE CASCADE,
         user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
         created_at BIGINT NOT NULL, expires_at BIGINT NOT NULL)`,
      `CREATE INDEX jot_views_user ON jot_views(user_id, created_at)`,
      `CREATE INDEX jot_views_expires ON jot_views(expires_at)`,
    ],
  },
  {
    version: 16,
    name: 'the OAuth authorization server for /mcp: clients, codes, grants, tokens',
    statements: [
      // A client: registered here (`kind` 'dcr', RFC 7591; client_id random) or known by its
      // metadata document (`kind` 'cimd'; client_id is the document's https URL, and the row is the
      // cached document until `expires_at`). `metadata` is the validated metadata as JSON.
      `CREATE TABLE oauth_clients (
         client_id TEXT PRIMARY KEY, kind TEXT NOT NULL, client_name TEXT, metadata TEXT NOT NULL,
         created_at BIGINT NOT NULL, expires_at BIGINT, last_used_at BIGINT)`,
      // An authorization code, stored as its SHA-256 hash, single use (`used_at`); `grant_id` is
      // the grant its exchange made, revoked if the code is presented again.
      `CREATE TABLE oauth_codes (
         code_hash TEXT PRIMARY KEY, client_id TEXT NOT NULL, client_name TEXT NOT NULL,
         user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE, key_id TEXT,
         redirect_uri TEXT NOT NULL, code_challenge TEXT NOT NULL, resource TEXT NOT NULL, scope TEXT NOT NULL,
         refreshable INTEGER NOT NULL, created_at BIGINT NOT NULL, expires_at BIGINT NOT NULL,
         used_at BIGINT, grant_id TEXT)`,
      `CREATE INDEX oauth_codes_expires ON oauth_codes(expires_at)`,
      // A grant: one consent's chain of tokens (the family revoked whole). `key_id` is the API key
      // the consenting portal session signed in with (NULL otherwise): revoking that key ends the
      // grant, as it ends the keys made with it. `expires_at` follows its newest refresh token.
      `CREATE TABLE oauth_grants (
         id TEXT PRIMARY KEY, user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
         client_id TEXT NOT NULL, client_name TEXT NOT NULL, redirect_uri TEXT NOT NULL,
         resource TEXT NOT NULL, scope TEXT NOT NULL, refreshable INTEGER NOT NULL, key_id TEXT REFERENCES api_keys(id),
         created_at BIGINT NOT NULL, expires_at BIGINT NOT NULL, last_used_at BIGINT,
         revoked_at BIGINT, revoked_reason TEXT)`,
      `CREATE INDEX oauth_grants_user ON oauth_grants(user_id, created_at)`,
      // Access and refresh tokens, stored only as SHA-256 hashes. A refresh token is spent
      // (`used_at`) when it is exchanged; presenting it again revokes its grant.
      `CREATE TABLE oauth_tokens (
         token_hash TEXT PRIMARY KEY, grant_id TEXT NOT NULL REFERENCES oauth_grants(id) ON DELETE CASCADE,
         kind TEXT NOT NULL, created_at BIGINT NOT NULL, expires_at BIGINT NOT NULL, used_at BIGINT, revoked_at BIGINT)`,
      `CREATE INDEX oauth_tokens_grant ON oauth_tokens(grant_id)`,
      `CREATE INDEX oauth_tokens_expires ON oauth_tokens(expires_at)`,
    ],
  },
  {
    version: 17,
    name: 'single sign-on identities; how a portal session was signed in',
    statements: [
      // One row per identity at an OpenID Connect provider that signed in as a user: the provider's
      // `iss` and `sub`, the user it is linked to (at the first sign-in, by verified email) and the
      // email it had then. A user has at most one subject per issuer: another subject with the same
      // email is refused, never signed in as that user (host/portal/sso/provision.ts).
      `CREATE TABLE user_identities (
         issuer TEXT NOT NULL, subject TEXT NOT NULL,
         user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
         email TEXT NOT NULL, created_at BIGINT NOT NULL, last_sign_in_at BIGINT NOT NULL,
         PRIMARY KEY (issuer, subject), UNIQUE (user_id, issuer))`,
      // 'api-key', 'login-link' or 'sso'; NULL for sessions opened before it was recorded (those
      // with a key_id were opened with that key, the others with a sign-in link)
      `ALTER TABLE portal_sessions ADD COLUMN sign_in_method TEXT`,
    ],
  },
  {
    version: 19,
    name: "a connection's own instance of its provider",
    statements: [
      // The origin of the instance a connection names (GitLab self-managed, a Data Center server);
      // NULL for the provider's default, which every connection made before this migration uses.
      // The sealed secret holds it too: this plain copy is for the engine's look-up and the pages.
      `ALTER TABLE connections ADD COLUMN instance_url TEXT`,
      // The instance an agent's connect suggested (the link's page shows it to the person), then
      // the one the person chose for the OAuth round trip (its token URL and client).
      `ALTER TABLE pending_connects ADD COLUMN instance_url TEXT`,
    ],
  },
];

/** Advisory lock key serialising migrations across processes on PostgreSQL ("WBMG"). */
export const MIGRATION_LOCK_KEY = 0x57424d47;

/**
 * Holds the migration lock until the transaction ends: on PostgreSQL a transaction-scoped advisory
 * lock, so replicas starting together apply each migration once; SQLite's BEGIN IMMEDIATE already
 * serialises writers.
 */
async function lockMigrations(tx: Db): Promise<void> {
  if (tx.kind === 'postgres') await tx.get('SELECT pg_advisory_xact_lock(?) AS locked', [MIGRATION_LOCK_KEY]);
}

export async function migrate(db: Db, migrations: readonly Migration[] = MIGRATIONS): Promise<number> {
  await db.transaction(async (tx) => {
    await lockMigrations(tx);
    await tx.run(
      `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`,
    );
  });
  const done = new Set(
    (await db.all<{ version: number }>('SELECT version FROM schema_migrations')).map((r) => Number(r.version)),
  );
  let applied = 0;
  for (const m of migrations) {
    if (done.has(m.version)) continue;
    const ran = await db.transaction(async (tx) => {
      await lockMigrations(tx);
      // Another process may have applied it while this one waited for the lock.
      if (await tx.get('SELECT version FROM schema_migrations WHERE version = ?', [m.version])) return false;
      for (const s of [...m.statements, ...(tx.kind === 'postgres' ? (m.postgres ?? []) : [])]) await tx.run(s);
      await tx.run('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)', [
        m.version,
        m.name,
        Date.now(),
      ]);
      return true;
    });
    if (ran) applied++;
  }
  return applied;
}
