/**
 * @module test/host/audit/audit-stdout-child
 * A separate process for the stdout audit sink tests: the sink writes to this process's real
 * stdout, its logger to stderr. On the parent's "go" (over IPC) it records the events the mode on
 * the command line names, waits for the writes to settle, and sends back the sink's failure count.
 * `closed`: three good events, after the parent has closed its end of our stdout (EPIPE).
 * `unserialisable`: one event with a BigInt, one with a circular value, then a good one.
 */
import pino from 'pino';
import { createStdoutAuditSink, type AuditEvent } from '../../../host/audit/audit.js';

const mode = process.argv[2];
const send = (message: unknown): Promise<void> => new Promise((resolve) => process.send?.(message, () => resolve()));
const logger = pino({ level: 'info' }, pino.destination({ fd: 2, sync: true }));
const sink = createStdoutAuditSink({ logger });
const event = (requestId: string, args?: unknown): AuditEvent => ({
  action: 'EXECUTE',
  tenant: 'acme',
  userId: 'u1',
  tool: 'echo_args',
  success: true,
  durationMs: 1,
  transport: 'rest',
  requestId,
  ...(args !== undefined ? { args } : {}),
});

// eslint-disable-next-line @typescript-eslint/no-misused-promises -- a failure rejects, which ends the child: the test sees it exit
process.once('message', async () => {
  if (mode === 'closed') {
    for (const id of ['r1', 'r2', 'r3']) await sink.record(event(id));
  } else {
    const circular: Record<string, unknown> = {};
    circular['self'] = circular;
    await sink.record(event('big', { n: 10n }));
    await sink.record(event('circular', circular));
    await sink.record(event('good', { q: 'fine' }));
  }
  await new Promise((resolve) => setTimeout(resolve, 200));
  await send({ failures: sink.failures });
  process.disconnect();
});
await send('ready');
