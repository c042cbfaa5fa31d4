/**
 * @module bench/result-cap
 * Section 4: capping a 5 MB result. fixture-echo's echo_big returns about 5,000,000 characters of
 * JSON; over MCP the gateway stores it for continue_tool_result and answers a stub under the cap
 * (60,000 characters by default). Timed one call at a time, interleaved with the baseline (the same
 * handler in-process followed by JSON.stringify of its result), plus the REST path (uncapped).
 * Then two scaling cases: capBatch alone on batches of 50 and 500 results over the cap (its cost
 * per item must not grow with the batch), and continue_tool_result paging one large stored result
 * (its cost per call must not grow with the body).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { capBatch } from '../host/results/cap.js';
import { partCharsFor, splitParts } from '../host/results/parts.js';
import { ContinuationStore } from '../host/results/continuations.js';
import type { BenchGateway } from './bench-gateway.js';
import { runPaired } from './closed-loop.js';
import { baselineCall } from './in-process-baseline.js';
import { LatencyRecorder, type LatencySummary } from './latency.js';
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

export async function runResultCap(
  gw: BenchGateway,
  upstream: LoopbackUpstream,
  o: { calls: number; chars: number },
): Promise<ResultCapResult> {
  const args = { chars: o.chars };
  const base = await baselineCall('fixture-echo', 'echo_big', args, upstream.origin);
  const resultChars = JSON.stringify(await base.run()).length;
  const client = new Client({ name: 'workbench-bench-cap', version: '0.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${gw.apiKey}` } },
    }),
  );
  let mcpAnswerChars = 0;
  try {
    const executions = [{ tool: 'echo_big', args }];
    const viaMcp = await runPaired(
      o.calls,
      2,
      async () => {
        const res = (await client.callTool({ name: 'execute_tools', arguments: { executions } })) as {
          content: Array<{ type: string; text?: string }>;
        };
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
        const res = await fetch(`${gw.url}/rest/fixture-echo`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${gw.apiKey}` },
          body,
        });
        const text = await res.text();
        if (res.status !== 200 || text.length < o.chars)
          throw new Error(`REST answered ${res.status} with ${text.length} characters`);
      },
      async () => undefined,
    );
    const result: ResultCapResult = {
      resultChars,
      calls: o.calls,
      mcpAnswerChars,
      mcp: viaMcp.a,
      baseline: viaMcp.b,
      rest: viaRest.a,
      errors: viaMcp.errors + viaRest.errors,
    };
    const firstError = viaMcp.firstError ?? viaRest.firstError;
    if (firstError !== undefined) result.firstError = firstError;
    return result;
  } finally {
    await client.close().catch(() => undefined);
  }
}

/** One batch size of the capBatch scaling case. */
export interface CapScalingRow {
  items: number;
  /** characters of each item's result string (its JSON is longer: it has quotes and newlines) */
  itemChars: number;
  /** characters of the uncapped `{results:[…]}` */
  batchChars: number;
  answerChars: number;
  /** wall time of each round, ms */
  roundsMs: number[];
  medianMs: number;
  /** median ÷ items: flat when capBatch is linear in the batch, growing with it when quadratic */
  perItemMs: number;
  /** the longest the event loop was held during a round (what a /healthz on another connection waits), ms */
  maxLoopDelayMs: number;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The longest the event loop kept a 5 ms timer waiting past its time, from now to stop(): what a
 * request on another connection (a health check) would have waited. (perf_hooks'
 * monitorEventLoopDelay does not record the gap before its first tick, so it misses a block that
 * starts right away.)
 */
function loopWatch(): { stop(): number } {
  const every = 5;
  let last = performance.now();
  let worst = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last - every);
    last = now;
  }, every);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(0, worst);
    },
  };
}

/** A distinct, flat string of `chars` characters that needs escaping, as a JSON API answer would. */
function resultText(chars: number, seed: number): string {
  const row = (n: number): string =>
    `{"id":${n},"name":"row ${n} of batch ${seed}","note":"line one\\nline \\"two\\""}\n`;
  let text = '';
  for (let n = 0; text.length < chars; n++) text += row(n);
  // JSON.parse of its encoding: a flat string, like the results the engine parses from the sandbox
  return JSON.parse(JSON.stringify(text.slice(0, chars))) as string;
}

/**
 * capBatch alone on batches of `counts` items, each a result string of `itemChars` characters,
 * with the gateway's own continuation store (SQLite) and result cap: every item is over the cap,
 * so every one is stored and stubbed. Linear work makes `perItemMs` the same at every count; the
 * work the review measured (the envelope serialised again before each item, in each of the three
 * preview passes) makes it grow with the count.
 */
export async function runCapScaling(
  gw: BenchGateway,
  o: { counts: number[]; itemChars: number; rounds: number; onRow?: (r: CapScalingRow) => void },
): Promise<CapScalingRow[]> {
  const store = new ContinuationStore(gw.gateway.db, 3600);
  const maxChars = gw.gateway.policy.resultCap.maxChars;
  const rows: CapScalingRow[] = [];
  for (const count of o.counts) {
    const items = Array.from({ length: count }, (_, i) => ({ result: resultText(o.itemChars, i) }));
    const batchChars = 14 + items.reduce((s, it) => s + JSON.stringify(it).length + 1, -1);
    const roundsMs: number[] = [];
    let answerChars = 0;
    let maxLoopDelayMs = 0;
    for (let r = 0; r < o.rounds; r++) {
      const loop = loopWatch();
      await sleep(20); // the watch has ticked: a block from the first moment is seen
      const t0 = performance.now();
      const text = await capBatch(items, { maxChars, userId: gw.user.id, store, toolOf: () => 'echo_big' });
      roundsMs.push(performance.now() - t0);
      await sleep(20); // and it ticks again after the last block
      maxLoopDelayMs = Math.max(maxLoopDelayMs, loop.stop());
      answerChars = text.length;
      const results = (JSON.parse(text) as { results: Array<{ result?: { truncated?: boolean } }> }).results;
      if (text.length > maxChars || results.length !== count || !results.every((x) => x.result?.truncated === true))
        throw new Error(`capBatch answered ${text.length} characters with ${results.length} items, not ${count} stubs`);
      // the stored bodies (up to ~330 MB per round at 500 items) go before the next round
      await store.deleteForUser(gw.user.id);
    }
    const sorted = [...roundsMs].sort((a, b) => a - b);
    const medianMs = sorted[Math.floor(sorted.length / 2)] ?? NaN;
    const row: CapScalingRow = {
      items: count,
      itemChars: o.itemChars,
      batchChars,
      answerChars,
      roundsMs,
      medianMs,
      perItemMs: medianMs / count,
      maxLoopDelayMs,
    };
    o.onRow?.(row);
    rows.push(row);
  }
  return rows;
}

export interface ContinuationPagingResult {
  bodyChars: number;
  totalParts: number;
  /** parts fetched (spread over the whole body, first and last included) */
  sampled: number;
  /** one continue_tool_result call over MCP, ms */
  perCall: LatencySummary;
  /** mean per call × totalParts: reading every part of the body, one call after the other, s */
  allPartsSec: number;
}

/**
 * continue_tool_result over MCP on one large stored result (stored by capBatch, as execute_tools
 * does): `sample` parts spread over the body, one call at a time; each chunk is checked against
 * the body.
 */
export async function runContinuationPaging(
  gw: BenchGateway,
  o: { bodyChars: number; sample: number },
): Promise<ContinuationPagingResult> {
  const store = new ContinuationStore(gw.gateway.db, 3600);
  const maxChars = gw.gateway.policy.resultCap.maxChars;
  const value = resultText(o.bodyChars, 0);
  const stubText = await capBatch([{ result: value }], {
    maxChars,
    userId: gw.user.id,
    store,
    toolOf: () => 'echo_big',
  });
  const stub = (JSON.parse(stubText) as { results: Array<{ result: { continuationId: string; totalParts: number } }> })
    .results[0]?.result;
  if (!stub?.continuationId) throw new Error(`expected a stub, got ${stubText.slice(0, 200)}`);
  const body = JSON.stringify(value);
  const bounds = splitParts(body, partCharsFor(maxChars));
  const wanted = [
    ...new Set(
      Array.from(
        { length: o.sample },
        (_, k) => 1 + Math.round((k * (stub.totalParts - 1)) / Math.max(1, o.sample - 1)),
      ),
    ),
  ];
  const client = new Client({ name: 'workbench-bench-paging', version: '0.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${gw.apiKey}` } },
    }),
  );
  const latency = new LatencyRecorder();
  try {
    for (const part of wanted) {
      const t0 = performance.now();
      const res = (await client.callTool({
        name: 'continue_tool_result',
        arguments: { continuationId: stub.continuationId, part },
      })) as { content: Array<{ type: string; text?: string }> };
      latency.record(performance.now() - t0);
      const page = JSON.parse(res.content.find((p) => p.type === 'text')?.text ?? '{}') as {
        chunk?: string;
        totalParts?: number;
      };
      const [from, to] = bounds[part - 1] ?? [0, 0];
      if (page.totalParts !== stub.totalParts || page.chunk !== body.slice(from, to))
        throw new Error(`part ${part} of ${stub.totalParts} is not the body's characters ${from}..${to}`);
    }
  } finally {
    await client.close().catch(() => undefined);
    await store.deleteForUser(gw.user.id);
  }
  const perCall = latency.summary();
  return {
    bodyChars: body.length,
    totalParts: stub.totalParts,
    sampled: wanted.length,
    perCall,
    allPartsSec: (perCall.mean * stub.totalParts) / 1000,
  };
}
