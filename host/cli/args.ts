/**
 * @module host/cli/args
 * A small flag parser for the CLI: `--name value`, `--name=value` and boolean `--flag`. A flag given
 * twice, or a boolean flag given a value, is refused (exit 2), never silently resolved.
 */
import { fail } from '../../contracts/errors.js';

export interface ParsedArgs {
  positionals: string[];
  flags: Map<string, string | true>;
}

export function parseArgs(argv: readonly string[], booleanFlags: readonly string[] = ['json', 'help']): ParsedArgs {
  const positionals: string[] = [];
  const flags = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (!a.startsWith('--')) {
      positionals.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const name = a.slice(2, eq === -1 ? undefined : eq);
    // `--email a --email b` kept the last without a word; `--json=false` turned JSON on
    if (flags.has(name)) throw fail('GW_ERR_CLI_USAGE', { message: `--${name} is given more than once` });
    if (eq !== -1 && booleanFlags.includes(name))
      throw fail('GW_ERR_CLI_USAGE', { message: `--${name} takes no value (give --${name} alone, or leave it out)` });
    if (eq !== -1) flags.set(name, a.slice(eq + 1));
    else if (booleanFlags.includes(name)) flags.set(name, true);
    else {
      const next = argv[i + 1];
      if (next === undefined || next.startsWith('--'))
        throw fail('GW_ERR_CLI_USAGE', { message: `--${name} needs a value` });
      flags.set(name, next);
      i++;
    }
  }
  return { positionals, flags };
}

export function stringFlag(args: ParsedArgs, name: string, required: true): string;
export function stringFlag(args: ParsedArgs, name: string, required?: false): string | undefined;
export function stringFlag(args: ParsedArgs, name: string, required = false): string | undefined {
  const v = args.flags.get(name);
  if (v === true) throw fail('GW_ERR_CLI_USAGE', { message: `--${name} needs a value` });
  if (v === undefined && required) throw fail('GW_ERR_CLI_USAGE', { message: `--${name} is required` });
  return v;
}
