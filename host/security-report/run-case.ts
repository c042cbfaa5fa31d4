/**
 * @module host/security-report/run-case
 * Runs one case and judges it. A case is contained iff its own expectation holds (catalogue.ts)
 * and so do the checks every case gets:
 *   - the sandbox process did not crash, and the call did not find it unavailable;
 *   - no form of any secret is in an answer the caller received or a log line (audit rows are
 *     searched once at the end, run-report.ts);
 *   - the attack reported no escape of its own (`escaped: true`, a non-empty `leaks`, a "LEAK…");
 *   - the canary (the internal service) received nothing;
 *   - the host's own Object.prototype is untouched;
 *   - right after, the plugin's probe sees a clean realm and a working ctx.http, and /healthz is 200.
 * Cases run one at a time, so everything observed between a case's start and end is its own.
 */
import { isDeepStrictEqual } from 'node:util';
import { CLEAN_PROBE, pluginOf } from './attack-plugins.js';
import { toolOf, type AttackCase, type Expected, type Observation } from './catalogue.js';
import type { Json } from './in-process-gateway.js';
import { callTool, type CallAnswer, type ReportEnv } from './scenario-env.js';
import { findSecrets } from './secret-forms.js';

export interface CaseVerdict {
  id: string;
  class: string;
  origin: 'corpus' | 'new';
  tries: string;
  contained: boolean;
  /** what the call ended with, in one line */
  happened: string;
  /** why it is not contained (empty when it is) */
  problems: string[];
  ms: number;
  pendingOn?: string;
}

const CRASHES = ['GW_ERR_SANDBOX_CRASHED', 'GW_ERR_SANDBOX_UNAVAILABLE', 'GW_ERR_ENGINE_INTERNAL', 'REPORT_NO_ITEM'];

const ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };
/** Control characters written as escapes, so that one line of the report stays one line. */
// These are the characters to escape.
const printable = (s: string): string =>
  s.replace(/[\u0000-\u001f\u007f]/g, (c) => ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
const clip = (s: string, n = 200): string => printable(s.length > n ? s.slice(0, n) + '…' : s);
/** A find of findSecrets, with JSON's nested escaping of quotes undone so that it reads. */
const readable = (hit: string): string => clip(hit.replace(/\\+"/g, '"'), 160);

/** What an execute_tools item says, in one line. */
export function describeItem(item: Json): string {
  if (item && typeof item === 'object' && 'error' in item)
    return clip(`error ${String(item.code)}: ${String(item.error)}`);
  if (item && typeof item === 'object' && 'result' in item)
    return clip(`result ${JSON.stringify(item.result) ?? 'undefined'}`);
  return clip(`answer ${JSON.stringify(item)}`);
}

/** The code an error item ended with: a bridge or sandbox code named in the message of an uncaught throw, else its own. */
function codeOf(item: Json): string {
  const named =
    item.code === 'GW_ERR_SANDBOX_HANDLER_THREW' ? /GW_ERR_[A-Z_]+/.exec(String(item.error ?? ''))?.[0] : undefined;
  return named ?? String(item.code);
}

/** Whether an error item ended with one of the codes: as its own code, or as the code ctx.http threw. */
export function errorNames(item: Json, codes: readonly string[]): boolean {
  return codes.includes(String(item.code)) || codes.includes(codeOf(item));
}

/** An attack's own report of an escape: `escaped: true`, a non-empty `leaks`, a string "LEAK…". */
export function findEscapes(value: unknown, at = '$', out: string[] = []): string[] {
  if (typeof value === 'string' && value.startsWith('LEAK')) out.push(`${at}: ${clip(value, 80)}`);
  else if (Array.isArray(value)) value.forEach((v, i) => findEscapes(v, `${at}[${i}]`, out));
  else if (value && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) {
      if (k === 'escaped' && v === true) out.push(`${at}.escaped`);
      if (k === 'leaks' && Array.isArray(v) && v.length > 0) out.push(`${at}.leaks: ${clip(JSON.stringify(v))}`);
      findEscapes(v, `${at}.${k}`, out);
    }
  return out;
}

function judgeExpected(expected: Expected, obs: Observation): string[] {
  const item = obs.item;
  const isError = item && typeof item === 'object' && 'error' in item;
  const problems: string[] = [];
  if (expected.outcome === 'result' && isError) problems.push(`expected the handler's result, got ${codeOf(item)}`);
  if (expected.outcome === 'error' && !isError)
    problems.push(`expected a refusal${expected.codes ? ` (${expected.codes.join(' or ')})` : ''}, got a result`);
  if (expected.outcome === 'error' && isError && expected.codes && !errorNames(item, expected.codes))
    problems.push(`expected ${expected.codes.join(' or ')}, got ${codeOf(item)}`);
  if (expected.upstreamAtMost !== undefined && obs.upstream.length > expected.upstreamAtMost)
    problems.push(
      `the upstream received ${obs.upstream.length} requests (at most ${expected.upstreamAtMost} may pass)`,
    );
  return problems;
}

interface Mark {
  logs: number;
  bodies: number;
  upstream: number;
  canary: number;
  crashes: number;
}

function mark(env: ReportEnv): Mark {
  return {
    logs: env.gw.logs.length,
    bodies: env.gw.bodies.length,
    upstream: env.targets.upstream.requests.length,
    canary: env.targets.canary.requests.length,
    crashes: env.gw.gateway.sandbox.stats().crashes,
  };
}

function observe(env: ReportEnv, from: Mark, answer: CallAnswer): Observation {
  return {
    item: answer.item,
    blocks: answer.blocks,
    rpcMessages: answer.rpcMessages,
    answers: env.gw.bodies.slice(from.bodies),
    upstream: env.targets.upstream.requests.slice(from.upstream),
    canary: env.targets.canary.requests.slice(from.canary),
    logs: env.gw.logs.slice(from.logs),
  };
}

/** The case's own calls: the handler once (or `runs` times), or its scenario. */
async function play(
  env: ReportEnv,
  c: AttackCase,
): Promise<{ answer: CallAnswer; happened?: string; problems: string[]; escapes: string[] }> {
  const plugin = pluginOf(env.plugins, c);
  if (c.scenario) {
    const r = await c.scenario({
      ...env,
      plugin,
      run: (caller, args = {}, via = 'mcp') => callTool(env, caller, plugin.name, toolOf(c), args, via),
    });
    return {
      answer: { item: r.item ?? { result: null }, blocks: [], rpcMessages: 0 },
      happened: r.happened,
      problems: r.problems,
      escapes: findEscapes(r.item?.result),
    };
  }
  const port = new URL(env.targets.canary.origin).port;
  const args = JSON.parse(
    JSON.stringify(c.args ?? {})
      .replaceAll('{canaryPort}', port)
      .replaceAll('%7BcanaryPort%7D', port),
  ) as Record<string, unknown>;
  let answer: CallAnswer | undefined;
  const escapes: string[] = [];
  for (let run = 0; run < (c.runs ?? 1); run++) {
    answer = await callTool(env, env.alice, plugin.name, toolOf(c), c.runs ? { ...args, run } : args, c.via);
    escapes.push(...findEscapes(answer.item?.result));
  }
  return { answer: answer as CallAnswer, problems: [], escapes };
}

/** The probe's answer after the case, and /healthz: why the gateway is not clean and up, if it is not. */
async function afterwards(env: ReportEnv, c: AttackCase): Promise<string[]> {
  const plugin = pluginOf(env.plugins, c);
  const problems: string[] = [];
  const probe = await callTool(env, env.alice, plugin.name, plugin.probeTool, {}, 'rest');
  if (!isDeepStrictEqual(probe.item?.result, CLEAN_PROBE))
    problems.push(`the next call did not start clean: ${describeItem(probe.item)}`);
  const health = await fetch(`${env.gw.url}/healthz`).then(
    (r) => r.status,
    (e: unknown) => String(e),
  );
  if (health !== 200) problems.push(`/healthz answered ${health}`);
  return problems;
}

function commonProblems(env: ReportEnv, before: Mark, obs: Observation, escapes: string[]): string[] {
  const problems: string[] = [];
  if (CRASHES.includes(String(obs.item?.code))) problems.push(`the call ended with ${String(obs.item.code)}`);
  const crashes = env.gw.gateway.sandbox.stats().crashes - before.crashes;
  if (crashes > 0) problems.push(`the sandbox process crashed ${crashes} time(s) and was replaced`);
  const seen = findSecrets([JSON.stringify(obs.item) ?? '', ...obs.answers], env.secrets);
  if (seen.length > 0) problems.push(`a secret reached the plugin and the caller, ${readable(seen[0] as string)}`);
  const logged = findSecrets(obs.logs, env.secrets);
  if (logged.length > 0) problems.push(`a log line holds a secret, ${readable(logged[0] as string)}`);
  if (escapes.length > 0) problems.push(`the attack reports an escape: ${clip(escapes.slice(0, 3).join('; '))}`);
  if (obs.canary.length > 0)
    problems.push(
      `the internal canary received ${obs.canary.length} request(s): ${clip(obs.canary.map((r) => `${r.method} ${r.url}`).join(', '))}`,
    );
  const hostProto = ['polluted', 'isAdmin', '__tenantLeak'].filter((k) => k in {});
  if (hostProto.length > 0) problems.push(`the host's Object.prototype was polluted: ${hostProto.join(', ')}`);
  return problems;
}

export async function runCase(env: ReportEnv, c: AttackCase): Promise<CaseVerdict> {
  const t0 = performance.now();
  const before = mark(env);
  const played = await play(env, c);
  const obs = observe(env, before, played.answer);
  const problems = [...played.problems, ...judgeExpected(c.expected, obs)];
  const extra = c.check?.(obs);
  if (extra) problems.push(extra);
  problems.push(...commonProblems(env, before, obs, played.escapes), ...(await afterwards(env, c)));
  return {
    id: c.id,
    class: c.class,
    origin: c.origin,
    tries: c.tries,
    contained: problems.length === 0,
    happened: played.happened ?? describeItem(obs.item),
    problems,
    ms: Math.round(performance.now() - t0),
    ...(c.pendingOn ? { pendingOn: c.pendingOn } : {}),
  };
}
