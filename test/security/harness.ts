/**
 * @module test/security/harness
 * A real gateway for attack tests (the security report's in-process gateway: logs kept in memory,
 * every response body kept) with the fixture and hostile plugins; plus a search for secrets in
 * their raw, base64 and URL forms.
 */
import path from 'node:path';
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
  input['upstreams'] = { ...((input['upstreams'] as Record<string, string>) ?? {}), ...(options.upstreams ?? {}) };
  input['sandbox'] = { workers: 2, ...((input['sandbox'] as Record<string, unknown>) ?? {}) };
  return startInProcessGateway({ policy: input, pluginDirs: options.pluginDirs ?? [FIXTURE_PLUGINS, HOSTILE_PLUGINS], env: options.env ?? {} });
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
        if (at >= 0) hits.push(`text #${i} holds a form of ${secret}: …${t.slice(Math.max(0, at - 80), at + form.length + 20)}…`);
      });
  return hits;
}
