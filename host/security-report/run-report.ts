/**
 * @module host/security-report/run-report
 * Runs the attack catalogue against a real gateway started in this process: a temporary data
 * directory with its own SQLite file (never the operator's), the attack plugins written to a
 * temporary folder, the hostile upstream and the canary on 127.0.0.1, and the policy file (the
 * shipped default unless told otherwise) with what the report needs laid over it. Cases run one at
 * a time; then the audit rows are searched for secrets; then everything is closed and removed.
 */
import { randomBytes, randomInt } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { GatewayError } from '../errors.js';
import { DEFAULT_POLICY_FILE, PACKAGE_ROOT } from '../paths.js';
import { loadPolicyFile } from '../policy/load.js';
import { VERSION } from '../version.js';
import { ATTACK_UPSTREAMS, groupIntoPlugins, writeAttackPlugins, type AttackPlugin } from './attack-plugins.js';
import { attackResolver } from './attack-dns.js';
import { ATTACK_CLASSES, toolOf, type AttackCase } from './catalogue.js';
import { startAttackTargets, type AttackTargets } from './hostile-upstream.js';
import { startInProcessGateway, type InProcessGateway } from './in-process-gateway.js';
import { runCase, type CaseVerdict } from './run-case.js';
import type { Caller, ReportEnv } from './scenario-env.js';
import { findSecrets } from './secret-forms.js';
import { fail } from '../../contracts/errors.js';

/**
 * Limits the report sets on its attack plugins, so that a call that never settles times out in
 * seconds (the default is 30 s); the CPU limit of a step stays the policy's.
 */
export const ATTACK_LIMITS = { wallMsPerCall: 2000 };
/** The tenant whose policy forbids the cross-user plugin. */
export const OUTSIDER_TENANT = 'outsiders';

export interface ClassSummary {
  id: string;
  title: string;
  ran: number;
  contained: number;
}

export interface Report {
  version: string;
  node: string;
  isolatedVm: string;
  /** the policy file the gateway ran with, and what the report laid over it */
  policy: { file: string; overlay: string[] };
  classes: ClassSummary[];
  cases: CaseVerdict[];
  ms: number;
}

export interface ReportOptions {
  cases: readonly AttackCase[];
  /** the policy file (default policies/default.json) */
  policyFile?: string;
}

/** A credential that looks like a real one: a prefix and 26 letters and digits of both cases. */
function tokenLike(prefix: string): string {
  const chars = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789';
  return prefix + Array.from({ length: 26 }, () => chars[randomInt(chars.length)]).join('');
}

/** The policy file with the report's upstreams, attack-plugin limits and outsider tenant laid over it. */
function attackPolicy(
  file: string,
  plugins: readonly AttackPlugin[],
  upstreamOrigin: string,
): { input: Record<string, unknown>; overlay: string[] } {
  // read and validated as `serve` would (GW_ERR_POLICY_INVALID naming the file and the field)
  const input = { ...loadPolicyFile(file) } as Record<string, unknown>;
  const upstreams = Object.fromEntries(ATTACK_UPSTREAMS.map((o) => [o, upstreamOrigin]));
  const limits = Object.fromEntries(
    plugins.map((p) => [
      p.name,
      {
        limits: {
          ...((input['plugins'] as Record<string, { limits?: object }>)?.[p.name]?.limits ?? {}),
          ...ATTACK_LIMITS,
        },
      },
    ]),
  );
  input['upstreams'] = { ...(input['upstreams'] ?? {}), ...upstreams };
  input['plugins'] = { ...(input['plugins'] ?? {}), ...limits };
  input['tenants'] = {
    ...(input['tenants'] ?? {}),
    [OUTSIDER_TENANT]: { allowPlugins: [], denyPlugins: ['attack-cross-user'], allowTools: [], denyTools: [] },
  };
  const overlay = [
    `upstreams: ${ATTACK_UPSTREAMS.join(', ')} → the hostile upstream on 127.0.0.1`,
    `plugins.attack-*.limits: ${Object.entries(ATTACK_LIMITS)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
    `tenants.${OUTSIDER_TENANT}: denyPlugins attack-cross-user`,
  ];
  return { input, overlay };
}

async function addCaller(
  gw: InProcessGateway,
  plugins: readonly AttackPlugin[],
  name: string,
  tenant: string,
): Promise<Caller> {
  const { user, apiKey } = await gw.createUser(`${name}@security-report.test`, tenant);
  const caller: Caller = {
    name,
    user,
    apiKey,
    token: tokenLike('Wb-'),
    basicUser: tokenLike('usr-'),
    site: `${name}-site-${randomBytes(4).toString('hex')}`,
  };
  for (const p of plugins)
    await gw.connect(p.name, user, undefined, {
      values: { token: caller.token, site: caller.site, ...(p.auth === 'basic' ? { user: caller.basicUser } : {}) },
    });
  return caller;
}

async function setUp(
  options: ReportOptions,
  plugins: AttackPlugin[],
  targets: AttackTargets,
  pluginsDir: string,
): Promise<{ env: ReportEnv; policy: Report['policy'] }> {
  const policyFile = options.policyFile ?? DEFAULT_POLICY_FILE;
  const { input, overlay } = attackPolicy(policyFile, plugins, targets.upstream.origin);
  writeAttackPlugins(pluginsDir, plugins);
  const gw = await startInProcessGateway({ policy: input, pluginDirs: [pluginsDir], resolver: attackResolver });
  try {
    if (gw.gateway.pluginErrors.length > 0)
      throw new GatewayError(
        'GW_ERR_PLUGIN_INVALID',
        `attack plugins refused: ${gw.gateway.pluginErrors.map((e) => `${e.file}: ${e.message}`).join('; ')}`,
      );
    const alice = await addCaller(gw, plugins, 'alice', 'acme');
    const bob = await addCaller(gw, plugins, 'bob', 'globex');
    const olive = await addCaller(gw, plugins, 'olive', OUTSIDER_TENANT);
    const keyFile = path.join(gw.dataDir, 'encryption.key');
    const dataKey = fs.existsSync(keyFile) ? [fs.readFileSync(keyFile, 'utf8').trim()] : [];
    const secrets = [alice, bob, olive].flatMap((c) => [c.token, c.basicUser, c.apiKey]).concat(dataKey);
    const shown = policyFile.startsWith(PACKAGE_ROOT + path.sep) ? path.relative(PACKAGE_ROOT, policyFile) : policyFile;
    return { env: { gw, targets, plugins, alice, bob, olive, secrets }, policy: { file: shown, overlay } };
  } catch (err) {
    await gw.close();
    throw err;
  }
}

/** The longest a case may take: each ends in seconds, so one that has not by then is stuck. */
export const CASE_DEADLINE_MS = 30_000;

/** Runs a case; one that throws or does not finish in time is recorded as not contained, and the others still run. */
async function runGuarded(env: ReportEnv, c: AttackCase): Promise<CaseVerdict> {
  const t0 = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(fail('GW_ERR_REPORT_FAILED', { message: `it did not finish within ${CASE_DEADLINE_MS / 1000} s` })),
      CASE_DEADLINE_MS,
    );
  });
  try {
    return await Promise.race([runCase(env, c), deadline]);
  } catch (err) {
    const why = `the case could not be run to its end: ${(err as Error).message}`;
    return {
      id: c.id,
      class: c.class,
      origin: c.origin,
      tries: c.tries,
      contained: false,
      happened: why,
      problems: [why],
      ms: Math.round(performance.now() - t0),
    };
  } finally {
    clearTimeout(timer);
  }
}

/** Audit rows holding a secret, blamed on the case whose tool they record. */
async function auditProblems(env: ReportEnv, cases: readonly AttackCase[], verdicts: CaseVerdict[]): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 100)); // audit rows are written in batches, on the next turn
  const rows = await env.gw.gateway.db.all<Record<string, unknown>>('SELECT * FROM audit_events');
  for (const row of rows) {
    const hits = findSecrets([JSON.stringify(row)], env.secrets);
    if (hits.length === 0) continue;
    const c = cases.find((x) => toolOf(x) === row['tool']);
    const verdict = verdicts.find((v) => v.id === c?.id) ?? verdicts[verdicts.length - 1];
    if (!verdict) continue;
    verdict.problems.push(`an audit row (${String(row['tool'])}) holds a secret, ${(hits[0] as string).slice(0, 200)}`);
    verdict.contained = false;
  }
}

function summarise(verdicts: readonly CaseVerdict[]): ClassSummary[] {
  return ATTACK_CLASSES.map((k) => {
    const mine = verdicts.filter((v) => v.class === k.id);
    return { id: k.id, title: k.title, ran: mine.length, contained: mine.filter((v) => v.contained).length };
  }).filter((s) => s.ran > 0);
}

function isolatedVmVersion(): string {
  try {
    return (createRequire(import.meta.url)('isolated-vm/package.json') as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

export async function runReport(options: ReportOptions): Promise<Report> {
  const t0 = performance.now();
  const plugins = groupIntoPlugins(options.cases);
  const pluginsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'workbench-attack-plugins-'));
  const targets = await startAttackTargets();
  try {
    const { env, policy } = await setUp(options, plugins, targets, pluginsDir);
    try {
      const verdicts: CaseVerdict[] = [];
      for (const c of options.cases) verdicts.push(await runGuarded(env, c));
      await auditProblems(env, options.cases, verdicts);
      return {
        version: VERSION,
        node: process.version,
        isolatedVm: isolatedVmVersion(),
        policy,
        classes: summarise(verdicts),
        cases: verdicts,
        ms: Math.round(performance.now() - t0),
      };
    } finally {
      await env.gw.close();
    }
  } finally {
    await targets.close();
    fs.rmSync(pluginsDir, { recursive: true, force: true });
  }
}
