/**
 * @module host/security-report/attack-plugins
 * Writes the attack plugins into a folder, as a third party would ship them: one plugin per class
 * (and credential style), a manifest.json and a plugin.js whose tools are the cases' handlers, plus
 * a `probe` tool that runs after each case to show the next call starts clean. The host never
 * evaluates this code: the gateway loads it like any plugin, into the sandbox.
 */
import fs from 'node:fs';
import path from 'node:path';
import { attackPluginOf, attackToolPrefix, toolOf, type AttackCase } from './catalogue.js';
import type { ScenarioPlugin } from './scenario-env.js';

/** The hosts the attack plugins declare. Those in ATTACK_UPSTREAMS lead to the hostile upstream; the others are what SSRF cases aim at. */
export const ATTACK_EGRESS = [
  'api.attack.test',
  'other.attack.test',
  'api.example.com',
  'rebind.example.com',
  'localhost',
  '127.0.0.1',
  '0.0.0.0',
  '10.0.0.1',
  '169.254.169.254',
  'metadata.google.internal',
  'loopback.attack.test',
  'private.attack.test',
  'mapped.attack.test',
  'nat64.attack.test',
  'sixtofour.attack.test',
  'linklocal6.attack.test',
  'ula.attack.test',
  'cgnat.attack.test',
];

/** Declared origins mapped (as an operator would, in the policy's `upstreams`) to the hostile upstream. */
export const ATTACK_UPSTREAMS = ['https://api.attack.test', 'https://other.attack.test', 'https://api.example.com'];

/** Runs after each case in the same plugin: the realm it sees, and whether ctx.http still works. */
const PROBE = `async (ctx, args) => ({
  protoKeys: Object.getOwnPropertyNames(Object.prototype).length,
  polluted: ['__tenantLeak', 'polluted', 'isAdmin', 'toJSON'].filter((k) => k in {}),
  pushNative: Function.prototype.toString.call(Array.prototype.push).includes('[native code]'),
  jsonParse: JSON.parse('{"a":1}').a === 1,
  stash: typeof globalThis.__stash,
  prepareStackTrace: typeof Error.prepareStackTrace,
  node: ['process', 'require', 'Buffer', 'module', '__wb_bridge', '__wb_start', '__wb_deliver'].filter((k) => typeof globalThis[k] !== 'undefined'),
  status: (await ctx.http('https://api.attack.test/json')).status,
})`;

/** What the probe must answer. */
export const CLEAN_PROBE = {
  protoKeys: 12,
  polluted: [],
  pushNative: true,
  jsonParse: true,
  stash: 'undefined',
  prepareStackTrace: 'undefined',
  node: [],
  status: 200,
};

export interface AttackPlugin extends ScenarioPlugin {
  cases: AttackCase[];
}

/** The cases grouped into their plugins. */
export function groupIntoPlugins(cases: readonly AttackCase[]): AttackPlugin[] {
  const byName = new Map<string, AttackPlugin>();
  for (const c of cases) {
    const name = attackPluginOf(c);
    const plugin = byName.get(name) ?? {
      name,
      auth: c.auth ?? 'bearer',
      probeTool: `${attackToolPrefix(c)}probe`,
      caseTools: [],
      cases: [],
    };
    plugin.cases.push(c);
    plugin.caseTools.push(toolOf(c));
    byName.set(name, plugin);
  }
  return [...byName.values()];
}

export const pluginOf = <P extends ScenarioPlugin>(plugins: readonly P[], c: AttackCase): P =>
  plugins.find((p) => p.name === attackPluginOf(c)) as P;

function authOf(style: 'bearer' | 'basic'): Record<string, unknown> {
  const fields = style === 'basic' ? [{ name: 'user', label: 'User', secret: true }] : [];
  return {
    type: 'apikey',
    fields: [
      ...fields,
      { name: 'token', label: 'Token', secret: true },
      { name: 'site', label: 'Site', required: false },
    ],
    inject: { header: 'authorization', format: style === 'basic' ? 'Basic {base64:user:token}' : 'Bearer {token}' },
  };
}

function manifestOf(p: AttackPlugin): Record<string, unknown> {
  const tool = (name: string, description: string) => ({ name, description, inputSchema: { type: 'object' } });
  return {
    name: p.name,
    version: '1.0.0',
    displayName: `Attack: ${p.name.slice('attack-'.length)}`,
    description: 'Security report attack plugin: every tool is one attack case.',
    auth: authOf(p.auth),
    egress: ATTACK_EGRESS,
    tools: [
      ...p.cases.map((c) => tool(toolOf(c), c.tries.slice(0, 4000))),
      tool(p.probeTool, 'Reports the realm a fresh call sees.'),
    ],
  };
}

function moduleOf(p: AttackPlugin): string {
  const lines = ['// Written by the security report: one tool per attack case.', 'const tools = {};'];
  for (const c of p.cases) lines.push(`tools[${JSON.stringify(toolOf(c))}] = (${c.handler.trim()});`);
  lines.push(`tools[${JSON.stringify(p.probeTool)}] = (${PROBE});`, 'export default tools;', '');
  return lines.join('\n');
}

/** Writes each plugin's folder under `root`. */
export function writeAttackPlugins(root: string, plugins: readonly AttackPlugin[]): void {
  for (const p of plugins) {
    const dir = path.join(root, p.name);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(manifestOf(p), null, 2));
    fs.writeFileSync(path.join(dir, 'plugin.js'), moduleOf(p));
  }
}
