/**
 * @module host/cli/serve
 * `workbench serve` and `workbench stdio`. Serve creates a local user on first start (and prints
 * its key and a ready MCP client config), reloads its plugins on SIGHUP (recording each reload's
 * report where `workbench plugins reload` reads it: server-record.ts), then drains on
 * SIGTERM/SIGINT: intake stops, calls in flight finish, the sandbox and the database close.
 * Further signals during the drain are ignored.
 */
import { createGateway, type Gateway } from '../app.js';
import type { GatewayConfig } from '../config.js';
import { GatewayError } from '../errors.js';
import { isUniqueViolation } from '../storage/db.js';
import { buildMcpServer } from '../transport/mcp-server.js';
import { StdioLineTransport } from '../transport/stdio-transport.js';
import { createLogger } from '../telemetry/logger.js';
import { VERSION } from '../version.js';
import { processStart, removeRecord, writeRecord, type ServerRecord } from './server-record.js';
import { fail } from '../../contracts/errors.js';

export const FIRST_USER_EMAIL = 'local@workbench.local';

export async function runServe(config: GatewayConfig): Promise<number> {
  const gateway = await createGateway(config);
  // Listen before the first user is created: a start that cannot listen (the port is taken) must not
  // create it and print its key only to exit, leaving the next start with no key to print.
  const url = await listenOrClose(gateway);
  // SIGHUP is handled before the record below tells anyone to send it
  const signals = handleSignals(gateway, () => record);
  const record = recordServer(gateway, url);
  const first = await createFirstUser(gateway, async () => {
    signals.remove();
    record.remove();
    await gateway.close();
  });
  if (first) printFirstUser(config, first.key);
  gateway.logger.info(
    { url, plugins: gateway.registry.plugins().length, tools: gateway.registry.toolCount },
    `Workbench ${VERSION} listening on ${url}`,
  );
  await signals.stopped;
  record.remove();
  await gateway.close();
  return 0;
}

/** Starts listening; a start that cannot (e.g. the port is taken) stops the sandbox process and the database. */
async function listenOrClose(gateway: Gateway): Promise<string> {
  try {
    return await gateway.listen();
  } catch (err) {
    // or the process stays up
    await gateway.close();
    throw err;
  }
}

interface SignalHandlers {
  /** resolves at the first SIGTERM or SIGINT: the drain begins */
  stopped: Promise<void>;
  /** takes the handlers off again (a start that fails) */
  remove(): void;
}

/**
 * SIGTERM and SIGINT start the drain, SIGHUP reloads the plugins. The handlers are installed at
 * once, and stay until the process exits: a signal during the drain must not take Node's default
 * action (exit at once, dropping the calls in flight). Repeats are common and innocent: a group
 * signal (Ctrl-C, systemd, `timeout`) reaches this process through bin/workbench.js too, so it
 * arrives twice, and systemd or an impatient operator may send SIGTERM again. SIGKILL is the way to
 * stop at once.
 */
function handleSignals(gateway: Gateway, record: () => RecordHandle): SignalHandlers {
  let stop!: () => void;
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  let draining = false;
  let repeatLogged = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (!draining) {
      draining = true;
      gateway.logger.info({ signal }, 'shutting down: draining calls in flight');
      stop();
    } else if (!repeatLogged) {
      repeatLogged = true;
      gateway.logger.info(
        { signal },
        `${signal} during the shutdown ignored: the drain goes on (SIGKILL stops the process at once, dropping the calls in flight)`,
      );
    }
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  const onHangup = (): void => {
    if (draining)
      gateway.logger.info(
        { signal: 'SIGHUP' },
        'SIGHUP during the shutdown ignored: plugins are not reloaded while the server drains',
      );
    else void reloadOnSignal(gateway, record());
  };
  process.on('SIGHUP', onHangup);
  return {
    stopped,
    remove() {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      process.off('SIGHUP', onHangup);
    },
  };
}

/**
 * The first user, on a first start (none yet), with its key. Replicas starting together on an empty
 * database race here: the loser's insert fails on the unique email, and it simply starts without
 * printing a key. Any other failure (a read-only or full database) stops the start, after
 * `abandon`: a server with no user and no key printed has no way in. The user and its key are made
 * in one transaction, so a failure leaves no user behind (the next start is the first start again,
 * and prints a key).
 */
async function createFirstUser(gateway: Gateway, abandon: () => Promise<void>): Promise<{ key: string } | undefined> {
  try {
    if ((await gateway.users.count()) === 0)
      return await gateway.users.createWithApiKey(FIRST_USER_EMAIL, 'default', 'first start');
  } catch (err) {
    if (!isUniqueViolation(err)) {
      await abandon();
      throw fail('GW_ERR_STORAGE_UNAVAILABLE', {
        message: `could not create the first user: ${err instanceof Error ? err.message : String(err)}`,
      });
    }
  }
  return undefined;
}

/**
 * The first user's key and a ready MCP client configuration, for the person starting it, on
 * stderr: stdout carries only JSON lines (the logs, or audit events with the stdout sink), which
 * collectors parse and ship.
 */
function printFirstUser(config: GatewayConfig, key: string): void {
  const clientConfig = {
    mcpServers: {
      workbench: { type: 'http', url: `${config.publicUrl}/mcp`, headers: { Authorization: `Bearer ${key}` } },
    },
  };
  process.stderr.write(
    `\nWorkbench created a local user (${FIRST_USER_EMAIL}). Its API key is shown once:\n\n  ${key}\n\n` +
      `MCP client configuration:\n\n${JSON.stringify(clientConfig, null, 2)}\n\n`,
  );
}

interface RecordHandle {
  update(patch: Partial<ServerRecord>): void;
  remove(): void;
}

/**
 * This server's record in the data dir (server-record.ts). One that cannot be written (a read-only
 * data dir) is logged once: SIGHUP still reloads, but `workbench plugins reload` cannot find the server.
 */
function recordServer(gateway: Gateway, url: string): RecordHandle {
  const { dataDir } = gateway.config;
  const start = processStart(process.pid);
  let record: ServerRecord = {
    pid: process.pid,
    url,
    startedAt: new Date().toISOString(),
    ...(start !== undefined ? { processStart: start } : {}),
  };
  let warned = false;
  const write = (): void => {
    try {
      writeRecord(dataDir, record);
    } catch (err) {
      if (!warned)
        gateway.logger.warn(
          { err },
          `this server's record for \`workbench plugins reload\` could not be written in ${dataDir}: that command will not find it (SIGHUP still reloads the plugins)`,
        );
      warned = true;
    }
  };
  write();
  return {
    update(patch) {
      record = { ...record, ...patch };
      write();
    },
    remove() {
      try {
        removeRecord(dataDir, process.pid);
      } catch {
        // never written (logged above), or the data dir turned read-only: the command skips records of servers gone
      }
    },
  };
}

async function reloadOnSignal(gateway: Gateway, record: RecordHandle): Promise<void> {
  gateway.logger.info({ signal: 'SIGHUP' }, 'SIGHUP: reloading the plugins');
  const startedAt = new Date().toISOString();
  try {
    record.update({ reload: await gateway.reloadPlugins() });
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    gateway.logger.error({ err }, 'the plugin reload failed; the plugins serving before keep serving');
    record.update({ reloadFailed: { startedAt, message } });
  }
}

export async function runStdio(config: GatewayConfig, email: string | undefined): Promise<number> {
  const logger = createLogger({ level: config.logLevel, destination: 'stderr' });
  const gateway = await createGateway(config, { logger });
  if (gateway.policy.audit.sink === 'stdout') {
    await gateway.close();
    throw new GatewayError(
      'GW_ERR_POLICY_INVALID',
      'audit.sink "stdout" cannot be used with `workbench stdio`: stdout carries the MCP protocol there, and audit lines would corrupt it. Use the default audit.sink "database" for stdio.',
    );
  }
  const key = process.env['WORKBENCH_API_KEY'];
  const user = key ? await gateway.users.authenticate(key) : email ? await gateway.users.byEmail(email) : undefined;
  if (!user) {
    await gateway.close();
    throw fail('GW_ERR_CLI_USAGE', {
      message: key
        ? 'WORKBENCH_API_KEY is not a valid key'
        : email
          ? `no user with email ${email}`
          : 'set WORKBENCH_API_KEY (or pass --email) to say who is calling',
    });
  }
  const server = buildMcpServer(
    { metaTools: () => gateway.metaTools, version: VERSION, logger, metaCalls: gateway.metaCalls },
    user,
    'stdio',
  );
  // e.g. a line on stdin that is not JSON-RPC or is too long: it is answered with an error; say so on stderr too
  server.onerror = (err) => logger.warn({ err }, 'MCP over stdio: a message could not be handled');
  const transport = new StdioLineTransport(process.stdin, process.stdout, {
    maxLineBytes: gateway.policy.requests.bodyLimitBytes,
  });
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once('end', () => resolve());
    process.on('SIGTERM', () => resolve()); // a repeat must not kill the process while it closes
  });
  await server.connect(transport);
  await closed;
  await gateway.close();
  return 0;
}
