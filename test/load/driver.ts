/**
 * @module test/load/driver
 * The load generator, run as its own process (`node dist/test/load/driver.js`): opens N MCP SDK
 * client sessions over Streamable HTTP and has each send `execute_tools` batches in a closed loop
 * until the duration or the call budget is spent. Every batch item carries a unique marker, so a
 * lost or misaligned result is detected. Prints one JSON summary line (prefixed "SUMMARY ").
 *
 * Options (env): LOAD_URL, LOAD_API_KEY, LOAD_SESSIONS (200), LOAD_DURATION_MS (20000),
 * LOAD_MAX_CALLS (0 = no budget), LOAD_BATCH (4), LOAD_PROGRESS_MS (0 = no progress lines).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

export interface LoadSummary {
  sessions: number;
  batch: number;
  durationMs: number;
  calls: number;
  executions: number;
  okItems: number;
  /** items whose marker was wrong or missing, or results arrays of the wrong length */
  misaligned: number;
  /** items that came back as errors (with their codes) */
  itemErrors: Record<string, number>;
  /** calls that failed as a whole: by HTTP status or error kind */
  callErrors: Record<string, number>;
  http5xx: number;
  callsPerSec: number;
  executionsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

const env = (name: string, fallback: string): string => process.env[name] ?? fallback;
const url = env('LOAD_URL', '');
const apiKey = env('LOAD_API_KEY', '');
const sessions = Number(env('LOAD_SESSIONS', '200'));
const durationMs = Number(env('LOAD_DURATION_MS', '20000'));
const maxCalls = Number(env('LOAD_MAX_CALLS', '0'));
const batch = Number(env('LOAD_BATCH', '4'));
const progressMs = Number(env('LOAD_PROGRESS_MS', '0'));

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function main(): Promise<void> {
  if (!url || !apiKey) throw new Error('set LOAD_URL and LOAD_API_KEY');
  const latencies: number[] = [];
  const summary: LoadSummary = {
    sessions,
    batch,
    durationMs: 0,
    calls: 0,
    executions: 0,
    okItems: 0,
    misaligned: 0,
    itemErrors: {},
    callErrors: {},
    http5xx: 0,
    callsPerSec: 0,
    executionsPerSec: 0,
    p50Ms: 0,
    p99Ms: 0,
    maxMs: 0,
  };
  const bump = (m: Record<string, number>, k: string): void => void (m[k] = (m[k] ?? 0) + 1);

  const clients: Client[] = [];
  for (let s = 0; s < sessions; s++) {
    const client = new Client({ name: `load-${s}`, version: '0.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${apiKey}` } },
      }),
    );
    clients.push(client);
  }

  const started = performance.now();
  const stopAt = started + durationMs;
  let budget = maxCalls > 0 ? maxCalls : Number.POSITIVE_INFINITY;
  let progress: NodeJS.Timeout | undefined;
  if (progressMs > 0)
    progress = setInterval(
      () =>
        process.stdout.write(
          `PROGRESS ${JSON.stringify({ calls: summary.calls, elapsedMs: Math.round(performance.now() - started) })}\n`,
        ),
      progressMs,
    );

  const session = async (s: number, client: Client): Promise<void> => {
    for (let seq = 0; performance.now() < stopAt && budget > 0; seq++) {
      budget--;
      const markers = Array.from({ length: batch }, (_, i) => `m-${s}-${seq}-${i}`);
      const t0 = performance.now();
      summary.calls++;
      summary.executions += batch;
      try {
        const res = (await client.callTool({
          name: 'execute_tools',
          arguments: { executions: markers.map((text) => ({ tool: 'echo_args', args: { text } })) },
        })) as {
          content: Array<{ type: string; text: string }>;
        };
        latencies.push(performance.now() - t0);
        const parsed = JSON.parse(res.content[0]?.text ?? '{}') as {
          results?: Array<{ result?: { text?: string }; code?: string }>;
        };
        const results = parsed.results ?? [];
        if (results.length !== batch) summary.misaligned += batch;
        for (const [i, item] of results.entries()) {
          if (item.code) bump(summary.itemErrors, item.code);
          else if (item.result?.text === markers[i]) summary.okItems++;
          else summary.misaligned++;
        }
      } catch (err) {
        latencies.push(performance.now() - t0);
        const code = (err as { code?: unknown }).code;
        if (typeof code === 'number' && code >= 500 && code < 600) summary.http5xx++;
        bump(
          summary.callErrors,
          typeof code === 'number' || typeof code === 'string' ? String(code) : (err as Error).name || 'Error',
        );
      }
    }
  };
  await Promise.all(clients.map((c, s) => session(s, c)));
  if (progress) clearInterval(progress);
  summary.durationMs = Math.round(performance.now() - started);
  for (const c of clients) await c.close().catch(() => undefined);

  latencies.sort((a, b) => a - b);
  summary.callsPerSec = Math.round((summary.calls / summary.durationMs) * 1000 * 10) / 10;
  summary.executionsPerSec = Math.round((summary.executions / summary.durationMs) * 1000 * 10) / 10;
  summary.p50Ms = Math.round(percentile(latencies, 50) * 10) / 10;
  summary.p99Ms = Math.round(percentile(latencies, 99) * 10) / 10;
  summary.maxMs = Math.round((latencies[latencies.length - 1] ?? 0) * 10) / 10;
  process.stdout.write(`SUMMARY ${JSON.stringify(summary)}\n`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`load driver failed: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
