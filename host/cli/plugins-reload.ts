/**
 * @module host/cli/plugins-reload
 * `workbench plugins reload [--timeout S] [--json]`: reloads the plugins of every server running
 * with this data dir (WORKBENCH_DATA_DIR), by sending each SIGHUP and reading the report it
 * records (server-record.ts), and prints what each did. Exit 0 when every server reloaded with no
 * plugin refused, 1 when some plugin was refused (the others were applied, and a refused upgrade
 * left its version serving), 2 when no server was found or one did not answer in time.
 */
import type { GatewayConfig } from '../config.js';
import type { PluginReport } from '../registry/plugin-loader.js';
import { stringFlag, type ParsedArgs } from './args.js';
import { isRunning, readRecord, runningServers, type ServerRecord } from './server-record.js';
import { fail } from '../../contracts/errors.js';

const POLL_MS = 100;
const DEFAULT_TIMEOUT_S = 120;

type Answer = { server: ServerRecord; report: PluginReport } | { server: ServerRecord; problem: string };

export async function runPluginsReload(config: GatewayConfig, args: ParsedArgs): Promise<number> {
  const timeoutMs = timeoutOf(args) * 1000;
  const servers = runningServers(config.dataDir);
  if (servers.length === 0)
    throw fail('GW_ERR_CLI_REFUSED', {
      message:
        `no running server uses the data directory ${config.dataDir} (a running \`workbench serve\` records itself in ${config.dataDir}/run/): ` +
        "run this command with the server's WORKBENCH_DATA_DIR, or send SIGHUP to the server process yourself",
    });
  const sentAt = Date.now();
  for (const s of servers) process.kill(s.pid, 'SIGHUP');
  const answers = await Promise.all(servers.map((s) => answerOf(config.dataDir, s, sentAt, sentAt + timeoutMs)));
  if (args.flags.has('json')) process.stdout.write(JSON.stringify({ servers: answers.map(jsonOf) }) + '\n');
  else for (const a of answers) process.stdout.write(textOf(a));
  if (answers.some((a) => 'problem' in a)) return 2;
  return answers.some((a) => 'report' in a && a.report.outcome === 'refused') ? 1 : 0;
}

function timeoutOf(args: ParsedArgs): number {
  const text = stringFlag(args, 'timeout');
  if (text === undefined) return DEFAULT_TIMEOUT_S;
  if (!/^\d+$/.test(text) || Number(text) < 1)
    throw fail('GW_ERR_CLI_USAGE', { message: '--timeout must be a whole number of seconds, at least 1' });
  return Number(text);
}

/** Waits for the server to record a reload that started after the signal was sent. */
async function answerOf(dataDir: string, server: ServerRecord, sentAt: number, deadline: number): Promise<Answer> {
  for (;;) {
    const now = readRecord(dataDir, server.pid);
    if (now?.reload && Date.parse(now.reload.startedAt) >= sentAt) return { server, report: now.reload };
    if (now?.reloadFailed && Date.parse(now.reloadFailed.startedAt) >= sentAt)
      return {
        server,
        problem: `the reload failed: ${now.reloadFailed.message}; the plugins serving before keep serving`,
      };
    if (!now || !isRunning(dataDir, server)) return { server, problem: 'the server stopped before it answered' };
    if (Date.now() > deadline)
      return {
        server,
        problem: `no answer within ${Math.round((deadline - sentAt) / 1000)} s: the reload may still be running; its result will be in the server's log`,
      };
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

function jsonOf(a: Answer): Record<string, unknown> {
  const server = { pid: a.server.pid, url: a.server.url };
  return 'report' in a ? { ...server, report: a.report } : { ...server, error: a.problem };
}

function textOf(a: Answer): string {
  const head = `server ${a.server.pid} (${a.server.url})`;
  if ('problem' in a) return `${head}: ${a.problem}\n`;
  const r = a.report;
  const seconds = ((Date.parse(r.finishedAt) - Date.parse(r.startedAt)) / 1000).toFixed(1);
  const lines = [
    `${head}: reloaded in ${seconds} s: ${r.added.length} added, ${r.upgraded.length} upgraded, ${r.removed.length} removed, ${r.unchanged} unchanged, ${r.refused.length} refused; ${r.plugins} plugins and ${r.tools} tools serving`,
    ...r.added.map((p) => `  added ${p.name}@${p.version} (${p.dir})`),
    ...r.upgraded.map((p) => `  upgraded ${p.name} ${p.from} → ${p.to} (${p.dir})`),
    ...r.removed.map((p) => `  removed ${p.name}@${p.version} (${p.dir})`),
    ...r.refused.map(
      (e) =>
        `  refused ${e.file}: ${e.code}: ${e.message}${e.keepsServing ? ` (${e.keepsServing} keeps serving)` : ''}`,
    ),
  ];
  return lines.join('\n') + '\n';
}
