/**
 * @module host/cli/main
 * The `workbench` command: serve, stdio, users create, connections import, keys rotate,
 * login-link, plugin validate|new|build. Every command prints a clear error and exits 2 on bad input.
 */
import { readConfig } from '../config.js';
import { isGatewayError } from '../errors.js';
import { parseArgs, stringFlag, type ParsedArgs } from './args.js';
import { runServe, runStdio } from './serve.js';
import { runConnectionsImport, runKeysRotate, runLoginLink, runPluginValidate, runUsersCreate } from './admin.js';
import { runPluginBuild, runPluginNew } from './plugin-commands.js';

const USAGE = `Usage: workbench <command>

  serve                                  start the HTTP server (default)
  stdio [--email E]                      serve MCP over stdin/stdout (key from WORKBENCH_API_KEY, or --email)
  users create --email E [--tenant T] [--json]
  connections import --email E --integration I (--token T [--refresh-token R] [--expires-in S] | --values JSON) [--config JSON]
  keys rotate [--new-key BASE64]         re-encrypt every stored credential under a new key
  login-link --email E                   print a one-time portal sign-in link
  plugin validate DIR                    check a plugin folder (manifest, schemas, source)
  plugin new NAME [--dir D]              scaffold a TypeScript plugin in D/NAME
  plugin build DIR [--out OUT] [--keep-zod] [--json]
                                         build DIR/plugin.ts into OUT (default DIR/dist): manifest.json + plugin.js

Environment: PORT, HOST, WORKBENCH_DATA_DIR, DATABASE_URL, WORKBENCH_PLUGINS_DIR, WORKBENCH_POLICY,
LOG_LEVEL, WORKBENCH_PUBLIC_URL, WORKBENCH_ENCRYPTION_KEY (see README).`;

async function main(argv: string[]): Promise<number> {
  let args: ParsedArgs;
  try {
    args = parseArgs(argv, ['json', 'help', 'keep-zod']);
  } catch (err) {
    process.stderr.write(`workbench: ${(err as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  const [command = 'serve', sub] = args.positionals;
  if (args.flags.has('help') || command === 'help') {
    process.stdout.write(USAGE + '\n');
    return 0;
  }
  try {
    switch (command) {
      case 'serve':
        return await runServe(readConfig());
      case 'stdio':
        return await runStdio(readConfig(), stringFlag(args, 'email'));
      case 'users':
        if (sub !== 'create') break;
        return await runUsersCreate(readConfig(), args);
      case 'connections':
        if (sub !== 'import') break;
        return await runConnectionsImport(readConfig(), args);
      case 'keys':
        if (sub !== 'rotate') break;
        return await runKeysRotate(readConfig(), args);
      case 'login-link':
        return await runLoginLink(readConfig(), args);
      case 'plugin':
        if (sub === 'new') return runPluginNew(args);
        if (sub === 'build') return await runPluginBuild(args);
        if (sub !== 'validate') break;
        return runPluginValidate(args.positionals[2]);
      default:
        break;
    }
    process.stderr.write(`workbench: unknown command "${args.positionals.join(' ')}"\n\n${USAGE}\n`);
    return 2;
  } catch (err) {
    if (isGatewayError(err)) process.stderr.write(`workbench: ${err.code}: ${err.message}\n`);
    else process.stderr.write(`workbench: ${(err as Error).message}\n`);
    return 2;
  }
}

process.exitCode = await main(process.argv.slice(2));
