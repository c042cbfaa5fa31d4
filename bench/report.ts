/**
 * @module bench/report
 * Turns the sections' results into plain-text tables for stdout. Ratios are always
 * Workbench ÷ baseline for throughput (higher is better, 1.00 = as fast as in-process) and
 * Workbench − baseline for latency overhead; end to end there are two baselines, the
 * seed-architecture gateway (mcp/seed-mcp, rest/seed-rest) and the handler alone.
 */
import { E2E_PATHS, SANDBOXED_PATHS, type E2ePath, type E2eRow } from './end-to-end.js';
import type { SandboxCostRow } from './sandbox-cost.js';
import type { CapScalingRow, ContinuationPagingResult, ResultCapResult } from './result-cap.js';
import type { StartupMemoryResult } from './startup-memory.js';

export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

const f0 = (n: number): string => (Number.isFinite(n) ? n.toFixed(0) : '-');
const f1 = (n: number): string => (Number.isFinite(n) ? n.toFixed(1) : '-');
/** a ratio: two decimals, or two significant digits when it is below 0.1 */
const ratio = (n: number): string => (!Number.isFinite(n) ? '-' : n >= 0.1 ? n.toFixed(2) : n.toPrecision(2));
const ms = (n: number): string => (Number.isFinite(n) ? (n < 10 ? n.toFixed(2) : n.toFixed(1)) : '-');

/** One end-to-end run per number of concurrent callers (--sweep). */
export interface SweepRun {
  clients: number;
  rows: E2eRow[];
}

/**
 * The ratios by load: per case, for each number of callers, Workbench ÷ the seed over MCP and over
 * REST, then the executions/s behind them (Workbench / seed, over MCP).
 */
export function sweepTables(runs: SweepRun[]): string {
  const names = [...new Set(runs.flatMap((r) => r.rows.map((row) => row.case.name)))];
  const cell = (name: string, run: SweepRun, f: (row: E2eRow) => string): string => {
    const row = run.rows.find((x) => x.case.name === name);
    return row ? f(row) : '-';
  };
  const ratios = table(
    ['mcp/seed-mcp, rest/seed-rest by callers', ...runs.map((r) => `${r.clients}`)],
    names.map((n) => [
      n,
      ...runs.map((run) =>
        cell(
          n,
          run,
          (row) => `${ratio(row.ratios.mcpOverSeedMcp ?? NaN)} ${ratio(row.ratios.restOverSeedRest ?? NaN)}`,
        ),
      ),
    ]),
  );
  const rates = table(
    ['executions/s over MCP, workbench/seed', ...runs.map((r) => `${r.clients}`)],
    names.map((n) => [
      n,
      ...runs.map((run) =>
        cell(
          n,
          run,
          (row) => `${f0(row.results.mcp?.execPerSec ?? NaN)}/${f0(row.results['seed-mcp']?.execPerSec ?? NaN)}`,
        ),
      ),
    ]),
  );
  return [ratios, '', rates].join('\n');
}

/** Column labels of the end-to-end paths. */
const PATH_LABEL: Record<E2ePath, string> = {
  baseline: 'handler alone',
  'seed-mcp': 'seed mcp',
  mcp: 'mcp',
  'seed-rest': 'seed rest',
  rest: 'rest',
  sandbox: 'sandbox',
};

export function e2eTables(rows: E2eRow[]): string {
  const per = (r: E2eRow, p: E2ePath): string => f0(r.results[p]?.execPerSec ?? NaN);
  const errors = (r: E2eRow): string => String(E2E_PATHS.reduce((n, p) => n + (r.results[p]?.errors ?? 0), 0));
  const seed = table(
    [
      'vs the seed architecture (executions/s)',
      'seed mcp',
      'mcp',
      'mcp/seed-mcp',
      'seed rest',
      'rest',
      'rest/seed-rest',
      'errors',
    ],
    rows.map((r) => [
      r.case.name,
      per(r, 'seed-mcp'),
      per(r, 'mcp'),
      ratio(r.ratios.mcpOverSeedMcp ?? NaN),
      per(r, 'seed-rest'),
      per(r, 'rest'),
      ratio(r.ratios.restOverSeedRest ?? NaN),
      errors(r),
    ]),
  );
  const handler = table(
    [
      'vs the handler alone (executions/s)',
      'handler alone',
      'mcp/handler',
      'rest/handler',
      'sandbox',
      'sandbox/handler',
      'seed-mcp/handler',
      'seed-rest/handler',
    ],
    rows.map((r) => [
      r.case.name,
      per(r, 'baseline'),
      ratio(r.ratios.mcpOverHandler ?? NaN),
      ratio(r.ratios.restOverHandler ?? NaN),
      per(r, 'sandbox'),
      ratio(r.ratios.sandboxOverHandler ?? NaN),
      ratio(r.ratios.seedMcpOverHandler ?? NaN),
      ratio(r.ratios.seedRestOverHandler ?? NaN),
    ]),
  );
  const lat = (r: E2eRow, p: E2ePath): string => {
    const l = r.results[p]?.latencyMs;
    return l ? `${ms(l.p50)}/${ms(l.p99)}` : '-';
  };
  const latency = table(
    ['case (per request, ms p50/p99)', ...E2E_PATHS.map((p) => PATH_LABEL[p])],
    rows.map((r) => [r.case.name, ...E2E_PATHS.map((p) => lat(r, p))]),
  );
  const cpuOf = (r: E2eRow, p: E2ePath): string => {
    const c = r.cpuPerExecution[p];
    if (!c) return '-';
    return SANDBOXED_PATHS.includes(p) ? `${ms(c.hostMs)}+${ms(c.sandboxMs)}` : ms(c.hostMs);
  };
  const cpu = table(
    ['CPU per execution (ms, this process+sandbox)', ...E2E_PATHS.map((p) => PATH_LABEL[p])],
    rows.map((r) => [r.case.name, ...E2E_PATHS.map((p) => cpuOf(r, p))]),
  );
  const firstErrors = rows.flatMap((r) =>
    E2E_PATHS.flatMap((p) => {
      const res = r.results[p];
      return res?.firstError ? [`  ${r.case.name} / ${p}: ${res.errors} errors, first: ${res.firstError}`] : [];
    }),
  );
  return [seed, '', handler, '', latency, '', cpu, ...(firstErrors.length ? ['', 'errors:', ...firstErrors] : [])].join(
    '\n',
  );
}

export function sandboxTable(rows: SandboxCostRow[]): string {
  const t = table(
    [
      'tool / context mode (ms)',
      'calls',
      'sandbox p50',
      'p99',
      'in-process p50',
      'p99',
      'overhead p50',
      'p99',
      'cold starts',
      'errors',
    ],
    rows.map((r) => [
      `${r.tool} / ${r.mode}`,
      String(r.calls),
      ms(r.sandbox.p50),
      ms(r.sandbox.p99),
      ms(r.baseline.p50),
      ms(r.baseline.p99),
      ms(r.overheadP50Ms),
      ms(r.overheadP99Ms),
      String(r.coldStarts),
      String(r.errors),
    ]),
  );
  const firstErrors = rows.filter((r) => r.firstError).map((r) => `  ${r.tool} / ${r.mode}: ${r.firstError}`);
  return [t, ...(firstErrors.length ? ['errors:', ...firstErrors] : [])].join('\n');
}

export function startupText(s: StartupMemoryResult): string {
  const mem = (label: string, m: StartupMemoryResult['atRest']): string[] => [
    label,
    f1(m.hostRssMb),
    m.sandboxRssMb === undefined ? '-' : f1(m.sandboxRssMb),
    f1(m.totalRssMb),
    f1(m.hostHeapUsedMb),
  ];
  const lines = [
    `createGateway with ${s.plugins} plugins / ${s.tools} tools, ${s.workers} sandbox workers: ${f0(s.createGatewayMs)} ms`,
    '',
    table(
      ['resident memory (MB)', 'host rss', 'sandbox rss', 'total', 'host heap'],
      [
        mem('at rest', s.atRest),
        mem('after first call of each plugin', s.afterFirstCalls),
        mem(`after ${s.executions} executions`, s.afterCalls),
      ],
    ),
    `memory per plugin isolate (sandbox RSS growth / isolates created): ${s.perIsolateMb === undefined ? '-' : f1(s.perIsolateMb)} MB`,
    `${s.executions} executions over MCP (batches of 8, ${s.load.concurrency} clients): ${f0(s.load.execPerSec)} executions/s, ${s.load.errors} errors${s.load.firstError ? ` (first: ${s.load.firstError})` : ''}`,
    '',
    table(
      ['first sandbox call per plugin (ms)', 'first call', 'cold', 'next calls p50', 'isolates built'],
      s.coldStarts.map((c) => [
        c.plugin,
        ms(c.firstCallMs),
        c.coldStart ? 'yes' : 'no',
        ms(c.nextCallsP50Ms),
        String(c.isolatesCreated),
      ]),
    ),
  ];
  return lines.join('\n');
}

export function resultCapText(r: ResultCapResult): string {
  const t = table(
    [`${r.resultChars} characters, ${r.calls} calls (ms)`, 'p50', 'p99', 'max'],
    [
      ['baseline: handler + JSON.stringify', ms(r.baseline.p50), ms(r.baseline.p99), ms(r.baseline.max)],
      [
        `mcp execute_tools (capped to a ${r.mcpAnswerChars}-character answer)`,
        ms(r.mcp.p50),
        ms(r.mcp.p99),
        ms(r.mcp.max),
      ],
      ['rest (uncapped)', ms(r.rest.p50), ms(r.rest.p99), ms(r.rest.max)],
    ],
  );
  return r.errors ? `${t}\nerrors: ${r.errors}, first: ${r.firstError ?? ''}` : t;
}

export function capScalingText(rows: CapScalingRow[]): string {
  const t = table(
    [
      'items × result characters',
      'batch characters',
      'answer characters',
      'ms (median)',
      'rounds (ms)',
      'ms per item',
      'longest event-loop block (ms)',
    ],
    rows.map((r) => [
      `${r.items} × ${r.itemChars}`,
      String(r.batchChars),
      String(r.answerChars),
      ms(r.medianMs),
      r.roundsMs.map(ms).join(' '),
      ms(r.perItemMs),
      ms(r.maxLoopDelayMs),
    ]),
  );
  const first = rows[0];
  const last = rows[rows.length - 1];
  if (!first || !last || first === last) return t;
  // linear: the cost per item stays put (≈ 1); quadratic: it grows with the batch (≈ the ratio of the sizes)
  return `${t}\nms per item at ${last.items} items ÷ at ${first.items} items: ${ratio(last.perItemMs / first.perItemMs)} (linear ≈ 1, quadratic ≈ ${ratio(last.items / first.items)})`;
}

export function pagingText(r: ContinuationPagingResult): string {
  return [
    table(
      [`${r.bodyChars} characters, ${r.totalParts} parts, ${r.sampled} calls (ms)`, 'p50', 'p99', 'mean', 'max'],
      [['continue_tool_result', ms(r.perCall.p50), ms(r.perCall.p99), ms(r.perCall.mean), ms(r.perCall.max)]],
    ),
    `reading all ${r.totalParts} parts, one call after the other (mean × parts): ${f1(r.allPartsSec)} s`,
  ].join('\n');
}
