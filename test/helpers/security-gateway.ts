/**
 * @module test/helpers/security-gateway
 * A real gateway for attack tests (the security report's in-process gateway: logs kept in memory,
 * every response body kept) with the fixture and hostile plugins; plus a search for secrets in
 * their raw, base64 and URL forms.
 */
import path from 'node:path';
import { domainToUnicode } from 'node:url';
import { startInProcessGateway, type InProcessGateway } from '../../host/security-report/in-process-gateway.js';
import { PACKAGE_ROOT } from '../../host/paths.js';

export { rpcMessages, type Json } from '../../host/security-report/in-process-gateway.js';

export const FIXTURE_PLUGINS = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'plugins');
export const HOSTILE_PLUGINS = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'hostile-plugins');

export type SecurityGateway = InProcessGateway;

export interface SecurityGatewayOptions {
  /** a partial policy file; `upstreams` below is merged into it */
  policy?: Record<string, unknown>;
  upstreams?: Record<string, string>;
  /** plugin roots (default: the fixture plugins, then the hostile ones) */
  pluginDirs?: string[];
  /** the gateway's environment (OAuth client ids, …); default empty */
  env?: NodeJS.ProcessEnv;
}

export async function startSecurityGateway(options: SecurityGatewayOptions = {}): Promise<SecurityGateway> {
  const input: Record<string, unknown> = { ...(options.policy ?? {}) };
  input['upstreams'] = { ...(input['upstreams'] ?? {}), ...(options.upstreams ?? {}) };
  input['sandbox'] = { workers: 2, ...(input['sandbox'] ?? {}) };
  return startInProcessGateway({
    policy: input,
    pluginDirs: options.pluginDirs ?? [FIXTURE_PLUGINS, HOSTILE_PLUGINS],
    env: options.env ?? {},
  });
}

/** The forms a secret could leak in: raw, base64 (alone and in Basic), URL-encoded, reversed. */
export function secretForms(secret: string): string[] {
  return [secret, Buffer.from(secret).toString('base64'), encodeURIComponent(secret), [...secret].reverse().join('')];
}

/** Where (if anywhere) any form of any secret occurs in the texts; [] when nowhere. */
export function findSecrets(texts: readonly string[], secrets: readonly string[]): string[] {
  const hits: string[] = [];
  for (const secret of secrets)
    for (const form of secretForms(secret))
      texts.forEach((t, i) => {
        const at = t.indexOf(form);
        if (at >= 0)
          hits.push(`text #${i} holds a form of ${secret}: …${t.slice(Math.max(0, at - 80), at + form.length + 20)}…`);
      });
  return hits;
}

/** A secret as a folding search looks for it: itself and the middle of its base64 and base64url at each byte alignment, lower case. */
function foldedForms(secret: string): string[] {
  const forms = [secret];
  for (let k = 0; k < 3; k++) {
    const core = Buffer.from('\0'.repeat(k) + secret)
      .toString('base64')
      .slice(4, -4);
    forms.push(core, core.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return forms.filter((f) => f.length >= 8).map((f) => f.toLowerCase());
}

/** A text read every way plugin code could decode it: as it is, percent-decoded, JSON-unescaped, punycode labels decoded; lower case. */
function readings(text: string): string[] {
  const percent = text.replace(/(?:%[0-9a-f]{2})+/gi, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run;
    }
  });
  const json = text
    .replace(/\\u([0-9a-f]{4})/gi, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)))
    .replace(/\\(["\\/])/g, '$1');
  const punycode = text.replace(/xn--[a-z0-9-]+/gi, (label) => domainToUnicode(label) || label);
  return [text, percent, json, punycode].map((t) => t.toLowerCase());
}

/**
 * Like findSecrets, for forms the gateway itself may fold: in any case, percent-encoded (any
 * characters), JSON-escaped, in a punycode host label, base64 at any alignment in any case.
 */
export function findFoldedSecrets(texts: readonly string[], secrets: readonly string[]): string[] {
  const hits: string[] = [];
  texts.forEach((text, i) => {
    const read = readings(text);
    for (const secret of secrets)
      for (const form of foldedForms(secret)) {
        const hit = read.find((r) => r.includes(form));
        if (hit !== undefined)
          hits.push(
            `text #${i} holds a form of ${secret}: …${hit.slice(Math.max(0, hit.indexOf(form) - 80), hit.indexOf(form) + form.length + 20)}…`,
          );
      }
  });
  return hits;
}
