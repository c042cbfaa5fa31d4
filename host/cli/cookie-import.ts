/**
 * @module host/cli/cookie-import
 * `connections import --cookies FILE|JSON` (admin.ts): the cookies of a signed-in session, read as
 * a JSON array (or a playwright storage state's "cookies"), stored through the same capture as a
 * live browser sign-in, with what was kept and what was left out said.
 */
import fs from 'node:fs';
import type { PluginManifest } from '../../contracts/manifest.js';
import { isConnectionError } from '../connections/errors.js';
import type { CookieCapture, FullConnectionService } from '../connections/service.js';
import type { User } from '../storage/users.js';
import { stringFlag, type ParsedArgs } from './args.js';
import { fail } from '../../contracts/errors.js';

/**
 * --cookies: a JSON array of cookies, given as the text itself or as a file holding it; a file of
 * playwright's storage state (`{"cookies": [...], "origins": [...]}`) is taken too.
 */
export function cookiesFlag(args: ParsedArgs, others: readonly string[]): unknown[] | undefined {
  const given = stringFlag(args, 'cookies');
  if (given === undefined) return undefined;
  const mixed = others.filter((f) => args.flags.has(f));
  if (mixed.length > 0)
    throw fail('GW_ERR_CLI_USAGE', {
      message: `--cookies is the whole credential of a cookie integration: give it without ${mixed.map((f) => `--${f}`).join(', ')}`,
    });
  const inline = /^\s*[[{]/.test(given);
  let text = given;
  if (!inline)
    try {
      text = fs.readFileSync(given, 'utf8');
    } catch (err) {
      throw fail('GW_ERR_CLI_USAGE', {
        message: `--cookies: cannot read the file ${given} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); give a file holding a JSON array of cookies, or the JSON itself`,
      });
    }
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    throw fail('GW_ERR_CLI_USAGE', {
      message: `--cookies${inline ? '' : ` (${given})`} is not JSON: ${(err as Error).message}`,
    });
  }
  if (typeof v === 'object' && v !== null && !Array.isArray(v) && Array.isArray((v as { cookies?: unknown }).cookies))
    v = (v as { cookies: unknown[] }).cookies;
  if (!Array.isArray(v))
    throw fail('GW_ERR_CLI_USAGE', {
      message:
        '--cookies must be a JSON array of cookies ({"name", "value", "domain", "path", "expires", "httpOnly", "secure", "sameSite"}), or a storage state with such a "cookies" array',
    });
  return v as unknown[];
}

/** --cookies is given exactly when the integration is a cookie integration. */
export function requireCookiesFor(manifest: PluginManifest, cookies: unknown[] | undefined): void {
  const type = manifest.auth.type;
  if ((type === 'cookie') === (cookies !== undefined)) return;
  throw fail('GW_ERR_CLI_USAGE', {
    message:
      type === 'cookie'
        ? `${manifest.name} is a cookie integration: give its signed-in session's cookies with --cookies FILE|JSON (a JSON array of cookies)`
        : `${manifest.name} is not a cookie integration (auth type "${type}"): --cookies does not apply`,
  });
}

/** The import of a cookie integration: the cookies kept and left out are said, a problem is a usage error (exit 2). */
export async function importCookies(
  args: ParsedArgs,
  service: FullConnectionService,
  user: User,
  manifest: PluginManifest,
  cookies: unknown[],
  replaced: boolean,
): Promise<number> {
  let r: CookieCapture;
  try {
    r = await service.captureCookies(user.id, manifest, cookies);
  } catch (err) {
    if (isConnectionError(err)) throw fail('GW_ERR_CLI_USAGE', { message: `--cookies: ${err.message}` });
    throw err;
  }
  const integration = manifest.name;
  const expires = r.expiresAt === null ? 'no expiry (session cookies)' : `until ${new Date(r.expiresAt).toISOString()}`;
  if (args.flags.has('json'))
    process.stdout.write(
      JSON.stringify({
        connectionId: r.connectionId,
        integration,
        userId: user.id,
        replaced,
        cookies: r.kept,
        dropped: r.dropped,
        expiresAt: r.expiresAt === null ? null : new Date(r.expiresAt).toISOString(),
      }) + '\n',
    );
  else
    process.stdout.write(
      `${replaced ? 'Replaced' : 'Connected'} ${integration} for ${user.email} (connection ${r.connectionId}): ${r.kept} cookie(s) kept, ${expires}` +
        (r.dropped.length > 0
          ? `; ${r.dropped.length} left out: ${r.dropped
              .slice(0, 10)
              .map((d) => `${d.name} (${d.domain}): ${d.reason}`)
              .join('; ')}${r.dropped.length > 10 ? '; …' : ''}`
          : '') +
        '.\n',
    );
  return 0;
}
