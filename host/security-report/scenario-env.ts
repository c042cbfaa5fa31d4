/**
 * @module host/security-report/scenario-env
 * What a case runs against: the in-process gateway, the hostile upstream and the canary, the attack
 * plugins, and three users. Alice runs the single-call cases; Bob is the other user of the
 * cross-user cases (another tenant, his own credential); Olive is in a tenant whose policy forbids
 * the cross-user plugin. Calls go over MCP's execute_tools or REST, as a client would send them.
 */
import type { User } from '../storage/users.js';
import type { AttackTargets } from './hostile-upstream.js';
import type { InProcessGateway, Json } from './in-process-gateway.js';

export interface Caller {
  name: string;
  user: User;
  apiKey: string;
  /** the credential of the caller's connections (HTTP Basic: the password) */
  token: string;
  /** the Basic user name, and the connections' non-secret setting */
  basicUser: string;
  site: string;
}

export interface ReportEnv {
  gw: InProcessGateway;
  targets: AttackTargets;
  plugins: ScenarioPlugin[];
  alice: Caller;
  bob: Caller;
  olive: Caller;
  /** every secret the report watches for: credentials, API keys, the data key */
  secrets: string[];
}

export interface CallAnswer {
  item: Json;
  /** MCP content blocks other than the results text */
  blocks: Json[];
  /** JSON-RPC messages of the MCP answer (0 over REST) */
  rpcMessages: number;
}

/** An item standing for an answer that held none (the report counts it as not contained). */
const noItem = (why: string): Json => ({ error: why, code: 'REPORT_NO_ITEM' });

async function callOverMcp(env: ReportEnv, caller: Caller, tool: string, args: unknown): Promise<CallAnswer> {
  const r = await env.gw.mcpCall('execute_tools', { executions: [{ tool, args }] }, caller.apiKey);
  const content: Json[] = Array.isArray(r.answer?.result?.content) ? r.answer.result.content : [];
  const text = content.find((c) => c?.type === 'text')?.text;
  let item: Json = noItem(`MCP answered ${r.status} without a result: ${r.text.slice(0, 200)}`);
  if (typeof text === 'string') item = JSON.parse(text).results?.[0] ?? noItem(`no item in ${text.slice(0, 200)}`);
  return { item, blocks: content.filter((c) => c?.type !== 'text'), rpcMessages: r.messages.length };
}

async function callOverRest(
  env: ReportEnv,
  caller: Caller,
  plugin: string,
  tool: string,
  args: unknown,
): Promise<CallAnswer> {
  const r = await env.gw.post(`/rest/${plugin}`, { executions: [{ tool, args }] }, caller.apiKey);
  const item = r.json?.results?.[0] ?? noItem(`REST answered ${r.status}: ${r.text.slice(0, 200)}`);
  return { item, blocks: [], rpcMessages: 0 };
}

/** One execution of a tool of an attack plugin, as `caller`. */
export function callTool(
  env: ReportEnv,
  caller: Caller,
  plugin: string,
  tool: string,
  args: unknown,
  via: 'mcp' | 'rest' = 'mcp',
): Promise<CallAnswer> {
  return via === 'mcp' ? callOverMcp(env, caller, tool, args) : callOverRest(env, caller, plugin, tool, args);
}

/** The attack plugin a scenario's case belongs to, as a scenario sees it. */
export interface ScenarioPlugin {
  name: string;
  auth: 'bearer' | 'basic';
  probeTool: string;
  /** the tools of its cases, one each */
  caseTools: string[];
}

/** A scenario's view: the report's environment, and its own case's tool. */
export interface ScenarioEnv extends ReportEnv {
  plugin: ScenarioPlugin;
  /** runs the case's tool as `caller` over MCP (REST with via 'rest') */
  run(caller: Caller, args?: Record<string, unknown>, via?: 'mcp' | 'rest'): Promise<CallAnswer>;
}
