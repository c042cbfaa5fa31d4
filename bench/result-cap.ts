/**
 * @module bench/result-cap
 * Section 4: capping a 5 MB result. fixture-echo's echo_big returns about 5,000,000 characters of
 * JSON; over MCP the gateway stores it for continue_tool_result and answers a stub under the cap
 * (60,000 characters by default). Timed one call at a time, interleaved with the baseline (the same
 * handler in-process followed by JSON.stringify of its result), plus the REST path (uncapped).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { BenchGateway } from './bench-gateway.js';
import { runPaired } from './closed-loop.js';
import { baselineCall } from './in-process-baseline.js';
import type { LatencySummary } from './latency.js';
import type { LoopbackUpstream } from './loopback-upstream.js';

export interface ResultCapResult {
  resultChars: number;
  calls: number;
  /** characters of the MCP text answer (the stub) */
  mcpAnswerChars: number;
  mcp: LatencySummary;
  baseline: LatencySummary;
  rest: LatencySummary;
  errors: number;
  firstError?: string;
}

export async function runResultCap(gw: BenchGateway, upstream: LoopbackUpstream, o: { calls: number; chars: number }): Promise<ResultCapResult> {
  const args = { chars: o.chars };
  const base = await baselineCall('fixture-echo', 'echo_big', args, upstream.origin);
  const resultChars = JSON.stringify(await base.run()).length;
  const client = new Client({ name: 'workbench-bench-cap', version: '0.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${gw.apiKey}` } } }));
  let mcpAnswerChars = 0;
  try {
    const executions = [{ tool: 'echo_big', args }];
    const viaMcp = await runPaired(
      o.calls,
      2,
      async () => {
        const res = (await client.callTool({ name: 'execute_tools', arguments: { executions } })) as { content: Array<{ type: string; text?: string }> };
        const text = res.content.find((p) => p.type === 'text')?.text ?? '';
        mcpAnswerChars = text.length;
        const item = (JSON.parse(text) as { results: Array<{ result?: { truncated?: boolean } }> }).results[0];
        if (!item?.result?.truncated) throw new Error(`expected a truncated stub, got ${text.slice(0, 200)}`);
      },
      async () => {
        JSON.stringify(await base.run());
      },
    );
    const body = JSON.stringify({ executions });
    const viaRest = await runPaired(
      o.calls,
      2,
      async () => {
        const res = await fetch(`${gw.url}/rest/fixture-echo`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${gw.apiKey}` }, body });
        const text = await res.text();
        if (res.status !== 200 || text.length < o.chars) throw new Error(`REST answered ${res.status} with ${text.length} characters`);
      },
      async () => undefined,
    );
    const result: ResultCapResult = { resultChars, calls: o.calls, mcpAnswerChars, mcp: viaMcp.a, baseline: viaMcp.b, rest: viaRest.a, errors: viaMcp.errors + viaRest.errors };
    const firstError = viaMcp.firstError ?? viaRest.firstError;
    if (firstError !== undefined) result.firstError = firstError;
    return result;
  } finally {
    await client.close().catch(() => undefined);
  }
}
