/**
 * @module host/cli/main
 * The `workbench` command: serve, stdio, users create, users keys, users revoke-key, connections import, keys rotate, keys reseal,
 * login-link, plugin validate|new|build|test|link, plugins reload, security report. Every command prints a clear error and exits 2 on bad input
 * (an unknown command or option included); plugin validate and build exit 1 when the plugin itself
 * has problems.
 */
import { isConnectionError } from '../connections/errors.js';
import { readConfig } from '../config.js';
import { isGatewayError } from '../errors.js';
import { parseArgs, stringFlag, type ParsedArgs } from './args.js';
import { runServe, runStdio } from './serve.js';
import {
  runConnectionsImport,
  runKeysReseal,
  runKeysRotate,
  runLoginLink,
  runUsersCreate,
  runUsersKeys,
  runUsersRevokeKey,
} from './admin.js';
import { runPluginBuild, runPluginLink, runPluginNew, runPluginTest } from './plugin-commands.js';
import { runPluginValidate } from './plugin-validate.js';
import { runPluginsReload } from './plugins-reload.js';
import { runSecurityReport } from './security-report.js';

const USAGE = `Usage: workbench <command>

  serve                                  start the HTTP server (default)
  stdio [--email E]                      serve MCP over stdin/stdout (key from WORKBENCH_API_KEY, or --email)
  users create --email E [--tenant T] [--json]
  users keys --email E [--json]          list a user's API keys (prefixes, origins, states; never secrets)
  users revoke-key (--key SECRET | --email E --key ID|PREFIX) [--json]
                                         revoke an API key and the keys created with it (a leaked
                                         key's full text is enough; servers refuse it within a second)
  connections import --email E --integration I (--token T [--refresh-token R] [--expires-in S] | --values JSON) [--config JSON]
                     [--instance-url URL]   the connection's own instance (GitLab self-managed, …), checked
                                         against the policy's address rules; left out, a re-import keeps it
  connections import --email E --integration I --cookies FILE|JSON
                                         store a signed-in session's cookies (a JSON array) as a cookie connection
  keys rotate [--new-key BASE64]         re-encrypt every stored credential under a new key
                                         (--new-key required with WORKBENCH_ENCRYPTION_KEY, and
                                         already in WORKBENCH_ENCRYPTION_KEY_PREVIOUS)
  keys reseal [--json]                   re-encrypt under the current key every credential still sealed
                                         with an older (previous) key; reports how many are left
                                         (refused unless the current key is the one keys rotate moved to)
  login-link --email E                   print a one-time portal sign-in link
  plugin validate DIR                    check a plugin folder: manifest, schemas, and that plugin.js
                                         loads in the sandbox and exports every tool
  plugin new NAME [--dir D]              scaffold a TypeScript plugin in D/NAME
  plugin build DIR [--out OUT] [--keep-zod] [--json]
                                         build DIR/plugin.ts into OUT (default DIR/dist): manifest.json + plugin.js
  plugin test DIR [--fixtures F]         run DIR's tools against its recorded fixtures (DIR/fixtures/*.json)
                                         in a sandboxed gateway on loopback; exit 1 when one fails
  plugin link DIR                        give DIR node_modules/workbench (this Workbench), for type-checking
  plugins reload [--timeout S] [--json]  reload the plugins of the servers running with this data dir
                                         (WORKBENCH_DATA_DIR) without a restart, and print what changed
  security report [--class C[,C…]] [--json] [--list] [--policy FILE]
                                         run the attack catalogue against a gateway started on
                                         127.0.0.1 with a temporary data dir (never WORKBENCH_DATA_DIR)
                                         and print, per class, the cases run and contained; exit 1
                                         naming each case not contained (docs/security.md)

Environment: PORT, HOST, WORKBENCH_DATA_DIR, DATABASE_URL, WORKBENCH_PLUGINS_DIR, WORKBENCH_POLICY,
LOG_LEVEL, WORKBENCH_PUBLIC_URL, WORKBENCH_ENCRYPTION_KEY (see README).`;

/** the options each command takes (a misspelt one must not be ignored: --tenat would put a user in the default tenant) */
const KNOWN_FLAGS: Record<string, readonly string[]> = {
  serve: [],
  stdio: ['email'],
  'users create': ['email', 'tenant', 'json'],
  'users keys': ['email', 'json'],
  'users revoke-key': ['email', 'key', 'json'],
  'connections import': [
    'email',
    'integration',
    'token',
    'refresh-token',
    'expires-in',
    'values',
    'config',
    'cookies',
    'instance-url',
    'json',
  ],
  'keys rotate': ['new-key', 'json'],
  'keys reseal': ['json'],
  'login-link': ['email'],
  'plugin validate': [],
  'plugin new': ['dir'],
  'plugin build': ['out', 'keep-zod', 'json'],
  'plugin test': ['fixtures'],
  'plugin link': [],
  'plugins reload': ['timeout', 'json'],
  'security report': ['class', 'json', 'list', 'policy'],
};

/** An error message for an option the command does not take, or undefined. */
function unknownFlag(command: string, args: ParsedArgs): string | undefined {
  const known = KNOWN_FLAGS[command];
  if (!known) return undefined; // an unknown command is reported as such
  const bad = [...args.flags.keys()].find((f) => f !== 'help' && !known.includes(f));
  if (bad === undefined) return undefined;
  return `${command} does not take --${bad}${known.length ? ` (it takes ${known.map((f) => `--${f}`).join(', ')})` : ''}`;
}

async function main(argv: string[]): Promise<number> {
  let args: ParsedArgs;
  try {
    args = parseArgs(argv, ['json', 'help', 'keep-zod', 'list']);
  } catch (err) {
    process.stderr.write(`workbench: ${(err as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  const [command = 'serve', sub] = args.positionals;
  if (args.flags.has('help') || command === 'help') {
    process.stdout.write(USAGE + '\n');
    return 0;
  }
  const bad = unknownFlag(
    ['users', 'connections', 'keys', 'plugin', 'plugins', 'security'].includes(command)
      ? `${command} ${sub ?? ''}`
      : command,
    args,
  );
  if (bad) {
    process.stderr.write(`workbench: ${bad}\n\n${USAGE}\n`);
    return 2;
  }
  try {
    switch (command) {
      case 'serve':
        return await runServe(readConfig());
      case 'stdio':
        return await runStdio(readConfig(), stringFlag(args, 'email'));
      case 'users':
        if (sub === 'keys') return await runUsersKeys(readConfig(), args);
        if (sub === 'revoke-key') return await runUsersRevokeKey(readConfig(), args);
        if (sub !== 'create') break;
        return await runUsersCreate(readConfig(), args);
      case 'connections':
        if (sub !== 'import') break;
        return await runConnectionsImport(readConfig(), args);
      case 'keys':
        if (sub === 'reseal') return await runKeysReseal(readConfig(), args);
        if (sub !== 'rotate') break;
        return await runKeysRotate(readConfig(), args);
      case 'login-link':
        return await runLoginLink(readConfig(), args);
      case 'plugin':
        if (sub === 'new') return runPluginNew(args);
        if (sub === 'build') return await runPluginBuild(args);
        if (sub === 'test') return await runPluginTest(args);
        if (sub === 'link') return runPluginLink(args);
        if (sub !== 'validate') break;
        return await runPluginValidate(args.positionals[2]);
      case 'plugins':
        if (sub !== 'reload') break;
        return await runPluginsReload(readConfig(), args);
      case 'security':
        if (sub !== 'report') break;
        return await runSecurityReport(args);
      default:
        break;
    }
    process.stderr.write(`workbench: unknown command "${args.positionals.join(' ')}"\n\n${USAGE}\n`);
    return 2;
  } catch (err) {
    // a connection's refusal (a field, an instance URL) names its catalogue code as the gateway's do
    if (isGatewayError(err) || isConnectionError(err)) process.stderr.write(`workbench: ${err.code}: ${err.message}\n`);
    else process.stderr.write(`workbench: ${(err as Error).message}\n`);
    return 2;
  }
}

process.exitCode = await main(process.argv.slice(2));
