/**
 * @module host/cli/admin
 * Operator commands that need the database but not the server: users create, users keys, users
 * revoke-key, connections import, keys rotate, keys reseal, login-link (plugin validate is in
 * plugin-validate.ts). Each prints one line (or one JSON object with --json).
 */
import type { GatewayConfig } from '../config.js';
import { loadVaultWithPending, rotateStoredKey } from '../connections/key-files.js';
import { resealKeys } from '../connections/key-rotation.js';
import { clientFromEnv } from '../connections/oauth.js';
import { instanceRulesOf } from '../connections/instance-url.js';
import { createConnectionService } from '../connections/service.js';
import { requireSharedKey } from '../connections/vault.js';
import { loadPolicyFile } from '../policy/load.js';
import { loadPlugins, pluginRootProblem } from '../registry/load-plugins.js';
import type { Db } from '../storage/db.js';
import { openDatabase } from '../storage/open.js';
import { API_KEY_PREFIX, UserStore, validateEmail, validateTenant, type ApiKeyInfo } from '../storage/users.js';
import { stringFlag, type ParsedArgs } from './args.js';
import { cookiesFlag, importCookies, requireCookiesFor } from './cookie-import.js';
import { fail } from '../../contracts/errors.js';

async function withDb<T>(config: GatewayConfig, fn: (db: Db) => Promise<T>): Promise<T> {
  const db = await openDatabase(config.databaseUrl, config.dataDir);
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

/** --values as field texts: strings kept, numbers written out, nulls left out; any other value refused, naming the field. */
function textFields(values: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(values)) {
    if (v === null) continue;
    if (typeof v === 'string') out[k] = v;
    else if (typeof v === 'number' && Number.isFinite(v)) out[k] = String(v);
    else
      throw fail('GW_ERR_CLI_USAGE', {
        message: `--values: field "${k}" must be a string (or a number, or null to leave it out), not ${Array.isArray(v) ? 'a list' : typeof v}`,
      });
  }
  return out;
}

function parseJsonFlag(args: ParsedArgs, name: string): Record<string, unknown> | undefined {
  const text = stringFlag(args, name);
  if (text === undefined) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    throw fail('GW_ERR_CLI_USAGE', { message: `--${name} must be a JSON object: ${(err as Error).message}` });
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw fail('GW_ERR_CLI_USAGE', { message: `--${name} must be a JSON object` });
  return v as Record<string, unknown>;
}

export async function runUsersCreate(config: GatewayConfig, args: ParsedArgs): Promise<number> {
  const email = stringFlag(args, 'email', true);
  const tenant = stringFlag(args, 'tenant') ?? 'default';
  const problem = validateEmail(email) ?? validateTenant(tenant);
  if (problem) throw fail('GW_ERR_CLI_USAGE', { message: problem });
  return withDb(config, async (db) => {
    const users = new UserStore(db);
    if (await users.byEmail(email))
      throw fail('GW_ERR_CLI_REFUSED', { message: `a user with email ${email} already exists` });
    const user = await users.create(email, tenant);
    const { key } = await users.createApiKey(user.id, 'cli');
    if (args.flags.has('json'))
      process.stdout.write(JSON.stringify({ userId: user.id, tenant: user.tenant, apiKey: key }) + '\n');
    else process.stdout.write(`Created ${user.email} in tenant ${user.tenant}. API key (shown once):\n${key}\n`);
    return 0;
  });
}

const dateOf = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** What made a key, as the keys page says it (with the prefix of the key it was made with). */
function originText(k: ApiKeyInfo, all: readonly ApiKeyInfo[]): string {
  if (k.createdVia === 'link') return 'created with a sign-in link';
  if (k.createdVia === 'operator') return 'created by an operator';
  if (k.createdVia === null) return 'origin not recorded';
  const parent = all.find((p) => p.id === k.createdWithKeyId);
  return parent
    ? `created with key ${parent.prefix}…${parent.revokedAt !== null ? ' (revoked)' : ''}`
    : 'created with a key no longer stored';
}

/** `users keys --email E [--json]`: a user's API keys, oldest first (prefixes, never secrets). */
export async function runUsersKeys(config: GatewayConfig, args: ParsedArgs): Promise<number> {
  const email = stringFlag(args, 'email', true);
  return withDb(config, async (db) => {
    const users = new UserStore(db);
    const user = await users.byEmail(email);
    if (!user) throw fail('GW_ERR_CLI_REFUSED', { message: `no user with email ${email}` });
    const all = await users.listApiKeys(user.id);
    if (args.flags.has('json')) {
      const keys = all.map((k) => ({
        id: k.id,
        prefix: k.prefix,
        label: k.label,
        createdAt: dateOf(k.createdAt),
        lastUsedAt: dateOf(k.lastUsedAt),
        revokedAt: dateOf(k.revokedAt),
        createdVia: k.createdVia,
        createdWithKeyId: k.createdWithKeyId,
      }));
      process.stdout.write(JSON.stringify({ userId: user.id, email: user.email, keys }) + '\n');
      return 0;
    }
    if (all.length === 0) process.stdout.write(`${user.email} has no API keys.\n`);
    for (const k of all)
      process.stdout.write(
        `${k.prefix}…  ${k.revokedAt === null ? 'active ' : 'revoked'}  ${k.label || '(no label)'}  ${originText(k, all)}, ${dateOf(k.createdAt)}${k.lastUsedAt !== null ? `, last used ${dateOf(k.lastUsedAt)}` : ''}  id ${k.id}\n`,
      );
    return 0;
  });
}

/**
 * `users revoke-key (--key SECRET | --email E --key ID|PREFIX) [--json]`: revokes an API key and
 * the keys created with it (UserStore.revokeApiKeyChain), as the portal's keys page does. A leaked
 * key's full text is enough on its own; an id or the prefix the keys page shows needs the user's
 * email. Servers refuse the keys within a second (they re-check keys every KEY_RECHECK_MS).
 */
export async function runUsersRevokeKey(config: GatewayConfig, args: ParsedArgs): Promise<number> {
  const given = stringFlag(args, 'key', true).trim();
  const email = stringFlag(args, 'email');
  return withDb(config, async (db) => {
    const users = new UserStore(db);
    let userId: string;
    let keyId: string;
    // a secret is long; a prefix (wb_ and 8 characters, as the keys page shows) or an id is not
    const secret = given.startsWith(API_KEY_PREFIX) && given.length > 20 ? await users.keyBySecret(given) : undefined;
    if (secret) {
      if (secret.revokedAt !== null) throw fail('GW_ERR_CLI_REFUSED', { message: 'that key is already revoked' });
      ({ userId, keyId } = secret);
    } else {
      if (email === undefined)
        throw fail('GW_ERR_CLI_USAGE', {
          message:
            '--key is not the full text of a key: give the user with --email, and the key by its id or the prefix `users keys` shows',
        });
      const user = await users.byEmail(email);
      if (!user) throw fail('GW_ERR_CLI_REFUSED', { message: `no user with email ${email}` });
      const wanted = given.replace(/…$|\.\.\.$/, '');
      const live = (await users.listApiKeys(user.id)).filter((k) => k.revokedAt === null);
      const matches = live.filter((k) => k.id === wanted || (wanted.length >= 5 && k.prefix.startsWith(wanted)));
      if (matches.length === 0)
        throw fail('GW_ERR_CLI_REFUSED', {
          message: `${email} has no active key ${given} (see: workbench users keys --email ${email})`,
        });
      if (matches.length > 1)
        throw fail('GW_ERR_CLI_REFUSED', {
          message: `${given} names ${matches.length} active keys of ${email}: ${matches.map((k) => k.id).join(', ')}; give the id`,
        });
      userId = user.id;
      keyId = (matches[0] as ApiKeyInfo).id;
    }
    const all = await users.listApiKeys(userId);
    const done = await users.revokeApiKeyChain(userId, keyId);
    if (!done) throw fail('GW_ERR_CLI_REFUSED', { message: 'that key is already revoked' });
    const prefixOf = (id: string): string => `${all.find((k) => k.id === id)?.prefix ?? id}…`;
    if (args.flags.has('json'))
      process.stdout.write(JSON.stringify({ userId, revoked: [done.keyId, ...done.alsoRevoked] }) + '\n');
    else
      process.stdout.write(
        `Revoked ${prefixOf(done.keyId)}${done.alsoRevoked.length ? `, and the ${done.alsoRevoked.length} key(s) created with it: ${done.alsoRevoked.map(prefixOf).join(', ')}` : ''}. Servers refuse ${done.alsoRevoked.length ? 'them' : 'it'} within a second; portal sessions signed in with ${done.alsoRevoked.length ? 'them' : 'it'} are signed out.\n`,
      );
    return 0;
  });
}

export async function runConnectionsImport(config: GatewayConfig, args: ParsedArgs): Promise<number> {
  const email = stringFlag(args, 'email', true);
  const integration = stringFlag(args, 'integration', true);
  const token = stringFlag(args, 'token');
  const values = parseJsonFlag(args, 'values');
  const configValues = parseJsonFlag(args, 'config');
  const expiresText = stringFlag(args, 'expires-in');
  if (expiresText !== undefined && !/^\d+$/.test(expiresText))
    throw fail('GW_ERR_CLI_USAGE', { message: '--expires-in must be a whole number of seconds' });
  const cookies = cookiesFlag(args, ['token', 'values', 'config', 'expires-in', 'refresh-token', 'instance-url']);
  const instanceUrl = stringFlag(args, 'instance-url');
  if (!token && !values && cookies === undefined)
    throw fail('GW_ERR_CLI_USAGE', {
      message:
        'give --token (OAuth2, or the single secret field of an API-key integration), --values JSON (API-key fields) or --cookies FILE|JSON (a cookie integration)',
    });
  // API-key fields are text: a number is taken as written, null means the field is left out, and
  // anything else (an object, a list, true) is refused instead of being stored as "[object Object]"
  const fieldValues = values === undefined ? undefined : textFields(values);
  const loaded = loadPlugins(config.pluginDirs).plugins;
  const plugin = loaded.find((p) => p.manifest.name === integration);
  if (!plugin)
    throw fail('GW_ERR_CLI_REFUSED', {
      message:
        `no integration named "${integration}" in the plugin folders searched: ${config.pluginDirs.join(', ')} ` +
        `(found: ${loaded.map((p) => p.manifest.name).join(', ') || 'none'}). Run this command with the server's WORKBENCH_PLUGINS_DIR, ` +
        'WORKBENCH_DATA_DIR (or DATABASE_URL) and encryption key' +
        config.pluginDirs
          .map((d) => pluginRootProblem(d))
          .filter((p) => p !== undefined)
          .map((p) => `; ${p}`)
          .join(''),
    });
  const auth = plugin.manifest.auth;
  requireCookiesFor(plugin.manifest, cookies);
  if (auth.type === 'apikey' && token !== undefined && !values) {
    const secrets = auth.fields.filter((f) => f.secret);
    if (secrets.length !== 1) {
      const example = JSON.stringify(Object.fromEntries(secrets.map((f) => [f.name, '…'])));
      throw fail('GW_ERR_CLI_USAGE', {
        message: `--token fills only the single secret field of an API-key integration; ${integration} has ${secrets.length} (${secrets.map((f) => f.name).join(', ')}): use --values '${example}'`,
      });
    }
  }
  requireSharedKey(config.databaseUrl, config.dataDir, process.env);
  return withDb(config, async (db) => {
    const user = await new UserStore(db).byEmail(email);
    if (!user) throw fail('GW_ERR_CLI_REFUSED', { message: `no user with email ${email}` });
    const service = importService(config, db);
    const refreshToken = stringFlag(args, 'refresh-token');
    const replaced =
      (await db.get<{ id: string }>('SELECT id FROM connections WHERE user_id = ? AND integration = ?', [
        user.id,
        integration,
      ])) !== undefined;
    if (cookies !== undefined) return importCookies(args, service, user, plugin.manifest, cookies, replaced);
    const { connectionId } = await service.importConnection({
      userId: user.id,
      manifest: plugin.manifest,
      ...(token !== undefined ? { token } : {}),
      ...(refreshToken !== undefined ? { refreshToken } : {}),
      ...(expiresText !== undefined ? { expiresInSec: Number(expiresText) } : {}),
      ...(fieldValues ? { values: fieldValues } : {}),
      ...(configValues ? { config: configValues } : {}),
      ...(instanceUrl !== undefined ? { instanceUrl } : {}),
    });
    if (args.flags.has('json'))
      process.stdout.write(JSON.stringify({ connectionId, integration, userId: user.id, replaced }) + '\n');
    else if (replaced)
      process.stdout.write(
        `Replaced the ${integration} connection of ${user.email} (connection ${connectionId}; its config${auth.type === 'apikey' ? ' (non-secret fields)' : ''} is kept where --config${auth.type === 'apikey' ? ' or --values' : ''} did not give a new value).\n`,
      );
    else process.stdout.write(`Connected ${integration} for ${user.email} (connection ${connectionId}).\n`);
    return 0;
  });
}

/** The connection service `connections import` stores with: the server's key, clients and instance rules. */
function importService(config: GatewayConfig, db: Db): ReturnType<typeof createConnectionService> {
  const vault = loadVaultWithPending({ dataDir: config.dataDir });
  // an instance is checked against the server's own rules (its policy: private ranges, http, upstreams)
  const policy = loadPolicyFile(config.policyFile);
  return createConnectionService({
    db,
    vault,
    clientFor: clientFromEnv(),
    instanceRules: instanceRulesOf(policy.http, policy.upstreams),
  });
}

export async function runKeysRotate(config: GatewayConfig, args: ParsedArgs): Promise<number> {
  const newKey = stringFlag(args, 'new-key');
  requireSharedKey(config.databaseUrl, config.dataDir, process.env);
  return withDb(config, async (db) => {
    const r = await rotateStoredKey({ db, dataDir: config.dataDir, ...(newKey !== undefined ? { newKey } : {}) });
    if (args.flags.has('json'))
      process.stdout.write(
        JSON.stringify({
          rotated: r.rotated,
          keyId: r.keyId,
          storedIn: r.storedIn,
          ...(r.newKeyBase64 ? { newKey: r.newKeyBase64 } : {}),
        }) + '\n',
      );
    else {
      process.stdout.write(`Re-encrypted ${r.rotated} connection(s) under key ${r.keyId}.\n`);
      if (r.newKeyBase64)
        process.stdout.write(
          `Set WORKBENCH_ENCRYPTION_KEY to the new key and WORKBENCH_ENCRYPTION_KEY_PREVIOUS to the old one on every server, restart them, ` +
            `then run \`workbench keys reseal\` until it reports key ${r.keyId} and 0 left before removing the old key:\n${r.newKeyBase64}\n`,
        );
      else
        process.stdout.write(
          `The new key is in ${r.storedIn} (the old one in ${r.storedIn}.previous). Running servers with this data dir take it up on their next use of a connection sealed with it; ` +
            `then run \`workbench keys reseal\` until it reports key ${r.keyId} and 0 left.\n`,
        );
    }
    return 0;
  });
}

export async function runKeysReseal(config: GatewayConfig, args: ParsedArgs): Promise<number> {
  requireSharedKey(config.databaseUrl, config.dataDir, process.env);
  return withDb(config, async (db) => {
    const r = await resealKeys(db, loadVaultWithPending({ dataDir: config.dataDir }));
    if (args.flags.has('json'))
      process.stdout.write(JSON.stringify({ resealed: r.resealed, keyId: r.keyId, left: r.left }) + '\n');
    else {
      process.stdout.write(
        `Re-encrypted ${r.resealed} connection(s) under key ${r.keyId}; ${r.left} left on another key.\n`,
      );
      if (r.left === 0)
        process.stdout.write(
          'No connection needs an older key: it can be removed once every server runs with the current key.\n',
        );
      else
        process.stdout.write(
          'Servers still running with an older key sealed more meanwhile: restart them with the current key and run this again.\n',
        );
    }
    return 0;
  });
}

export async function runLoginLink(config: GatewayConfig, args: ParsedArgs): Promise<number> {
  const email = stringFlag(args, 'email', true);
  // a link the portal would refuse is no link: say so here, where it is made
  if (!loadPolicyFile(config.policyFile).signIn.loginLinks)
    throw fail('GW_ERR_CLI_REFUSED', {
      message: `one-time sign-in links are turned off by the policy (signIn.loginLinks in ${config.policyFile}): sign in with the ways the portal's sign-in page offers`,
    });
  return withDb(config, async (db) => {
    const user = await new UserStore(db).byEmail(email);
    if (!user) throw fail('GW_ERR_CLI_REFUSED', { message: `no user with email ${email}` });
    const { createLoginLink } = await import('../portal/login-links.js');
    const link = await createLoginLink(db, user.id, config.publicUrl);
    process.stdout.write(`${link}\n`);
    return 0;
  });
}
