/**
 * @module host/security-report/catalogue
 * What the security report runs: attack classes, and cases as data. A case names what it tries,
 * the attacking handler (run as a tool of its class's attack plugin, in the real sandbox) or a
 * scenario of several calls, and what "contained" means for it. The runner adds the checks every
 * case must pass (run-case.ts): no form of any secret where the caller, the logs or the audit can
 * see it, nothing reached the internal canary, no escape reported by the attack itself, the sandbox
 * process not crashed, and the gateway healthy and clean for the next call.
 */
import type { Json } from './in-process-gateway.js';
import type { RecordedRequest } from './recording-server.js';
import type { ScenarioEnv } from './scenario-env.js';

export const ATTACK_CLASSES = [
  {
    id: 'ssrf',
    title: 'SSRF forms',
    meaning:
      'a plugin (or an upstream redirect) aims ctx.http at loopback, private, link-local or metadata addresses, in every encoding and through DNS names; each request must be refused before a connection is made',
  },
  {
    id: 'header-smuggling',
    title: 'Header smuggling',
    meaning:
      'a plugin sets headers that carry credentials or steer routing, or puts CR, LF or NUL in a header, URL or method; each request must be refused before it leaves, or leave harmless',
  },
  {
    id: 'credential-echo',
    title: 'Credential echo',
    meaning:
      'an upstream hands the injected credential back (in bodies, headers, status lines, redirects, error messages), raw or transformed; the plugin, the caller, the logs and the audit must never see any form of it',
  },
  {
    id: 'isolate-escape',
    title: 'Isolate escapes',
    meaning:
      'plugin code looks for a way out of its V8 isolate: constructor chains to Function, stack-trace hooks, prototype pollution, Node globals, import(), eval, SharedArrayBuffer, WebAssembly, timers; nothing of the host may be reachable',
  },
  {
    id: 'resource-abuse',
    title: 'Resource abuse',
    meaning:
      'plugin code (or its upstream) tries to exhaust CPU, memory, requests or the host: loops, bombs, floods, huge or deep bodies; each call must end with a clear error while the gateway stays up',
  },
  {
    id: 'cross-user',
    title: 'Cross-user',
    meaning:
      "one user's call tries to see or use another user's credential, connection, continuation, audit or state; every lookup stays bound to the caller",
  },
  {
    id: 'result-shape',
    title: 'Result shapes',
    meaning:
      'a handler returns values that are not plain JSON, or that pose as something else (images, MCP envelopes, gateway errors); the caller gets a clear code or the honest JSON, never a forged block',
  },
] as const;

export type AttackClass = (typeof ATTACK_CLASSES)[number]['id'];

/** What the case's own call must end with (the checks every case gets come on top). */
export interface Expected {
  /**
   * 'error': the call fails (with one of `codes` when given: the item's code, or a code named in
   * its message, which is how an uncaught ctx.http refusal reads); 'result': the handler's result
   * comes back; 'any': either, but never a crash of the sandbox process.
   */
  outcome: 'error' | 'result' | 'any';
  codes?: readonly string[];
  /** the hostile upstream may receive at most this many requests during the case */
  upstreamAtMost?: number;
}

/** What one case left behind, for its checks. */
export interface Observation {
  /** the execute_tools item of the case's call (of its last call, for several runs) */
  item: Json;
  /** every answer body the caller received during the case */
  answers: string[];
  /** MCP content blocks other than text (image blocks), when the case ran over MCP */
  blocks: Json[];
  /** JSON-RPC messages in the MCP answer */
  rpcMessages: number;
  /** requests the hostile upstream and the canary received during the case */
  upstream: RecordedRequest[];
  canary: RecordedRequest[];
  /** log lines written during the case */
  logs: string[];
}

/** What a scenario found: a one-line account, and why it was not contained (empty: contained). */
export interface ScenarioResult {
  happened: string;
  problems: string[];
  /** the item of its last call, for the common checks */
  item?: Json;
}

export interface AttackCase {
  /** unique, kebab-case; the tool that runs it is this with "_" for "-" */
  id: string;
  class: AttackClass;
  /** what it tries, in one sentence */
  tries: string;
  /** 'corpus': from the attack corpus of the sandbox research (sandbox.md §2); 'new': added with this report */
  origin: 'corpus' | 'new';
  /** where the technique comes from, when it has a published source */
  reference?: string;
  /**
   * the attacking handler, a function expression `async (ctx, args) => …` (or `async function
   * handler(ctx, args) {…}`); `{canaryPort}` in the args is replaced by the canary's port
   */
  handler: string;
  args?: Record<string, unknown>;
  /** how the plugin's credential is sent: a bearer token (default) or HTTP Basic user:token */
  auth?: 'bearer' | 'basic';
  /** the transport of the call (default MCP's execute_tools) */
  via?: 'mcp' | 'rest';
  /** calls of the handler in a row, with args.run = 0, 1, … (default 1) */
  runs?: number;
  expected: Expected;
  /** a further condition on the observation: why the case is not contained, or undefined */
  check?: (obs: Observation) => string | undefined;
  /** several calls instead of one (cross-user): run by the scenario, which judges itself */
  scenario?: (env: ScenarioEnv) => Promise<ScenarioResult>;
  /** the work that is to close this case, when it is known not to be contained yet */
  pendingOn?: string;
}

/** Bridge codes that mean "refused before anything was sent". */
export const REFUSED_EGRESS = [
  'GW_ERR_BRIDGE_HOST_NOT_ALLOWED',
  'GW_ERR_BRIDGE_ADDRESS_BLOCKED',
  'GW_ERR_BRIDGE_SCHEME_NOT_ALLOWED',
  'GW_ERR_BRIDGE_BAD_REQUEST',
] as const;

/** The attack plugin a case runs in: one per class (and credential style). */
export const attackPluginOf = (c: Pick<AttackCase, 'class' | 'auth'>): string =>
  `attack-${c.class}${c.auth === 'basic' ? '-basic' : ''}`;

/**
 * The tool prefix of that plugin: the last word of its name, as host/registry/namespace.ts lets a
 * plugin name its tools; one per plugin, and short enough to keep every tool name within 64 characters.
 */
export const attackToolPrefix = (c: Pick<AttackCase, 'class' | 'auth'>): string =>
  `${attackPluginOf(c).split('-').pop() ?? 'attack'}_`;

/** The tool name of a case. */
export const toolOf = (c: Pick<AttackCase, 'id' | 'class' | 'auth'>): string =>
  `${attackToolPrefix(c)}${c.id.replace(/-/g, '_')}`;
