/**
 * @module host/cli/plugin-commands
 * `workbench plugin new NAME [--dir D]`, `plugin build DIR [--out OUTDIR] [--keep-zod]`,
 * `plugin test DIR [--fixtures F]` and `plugin link DIR`.
 * Exit 0 on success, 1 when the author's input is wrong (the message names the file and problem).
 */
import path from 'node:path';
import { PACKAGE_ROOT } from '../paths.js';
import { buildPlugin, PluginBuildError } from '../plugin-sdk/build.js';
import { FixtureError } from '../plugin-sdk/fixtures.js';
import { testPlugin } from '../plugin-sdk/plugin-test.js';
import { linkWorkbench, scaffoldPlugin } from '../plugin-sdk/scaffold.js';
import { stringFlag, type ParsedArgs } from './args.js';
import { fail } from '../../contracts/errors.js';

export function runPluginNew(args: ParsedArgs): number {
  const name = args.positionals[2];
  if (!name) throw fail('GW_ERR_CLI_USAGE', { message: 'usage: workbench plugin new NAME [--dir D]' });
  const { dir, files } = scaffoldPlugin(name, stringFlag(args, 'dir') ?? process.cwd());
  const rel = path.relative(process.cwd(), dir) || '.';
  // `npx workbench` only works inside the Workbench folder (elsewhere npx fetches an unrelated
  // registry package): print the command that works from anywhere
  const bin = path.join(PACKAGE_ROOT, 'bin', 'workbench.js');
  process.stdout.write(
    `Created ${dir}: ${files.join(', ')} (and node_modules/workbench, a link to this Workbench)\nNext: edit ${path.join(rel, 'plugin.ts')}, then run: node ${bin} plugin build ${rel}\nIn that folder, npm run build, npm test and npm run typecheck do the same from anywhere (see its README).\n`,
  );
  return 0;
}

export async function runPluginBuild(args: ParsedArgs): Promise<number> {
  const dir = args.positionals[2];
  if (!dir)
    throw fail('GW_ERR_CLI_USAGE', { message: 'usage: workbench plugin build DIR [--out OUTDIR] [--keep-zod]' });
  const out = stringFlag(args, 'out');
  try {
    const r = await buildPlugin({
      dir,
      ...(out !== undefined ? { outDir: out } : {}),
      keepZod: args.flags.has('keep-zod'),
    });
    for (const w of r.warnings) process.stderr.write(`warning: ${w}\n`);
    if (args.flags.has('json'))
      process.stdout.write(
        JSON.stringify({
          outDir: r.outDir,
          name: r.manifest.name,
          version: r.manifest.version,
          tools: r.manifest.tools.map((t) => t.name),
          manifestBytes: r.manifestBytes,
          pluginBytes: r.pluginBytes,
        }) + '\n',
      );
    else
      process.stdout.write(
        `built ${r.manifest.name}@${r.manifest.version}: ${r.manifest.tools.length} tool(s) → ${path.join(r.outDir, 'manifest.json')} (${r.manifestBytes} bytes), ${path.join(r.outDir, 'plugin.js')} (${r.pluginBytes} bytes)\n`,
      );
    return 0;
  } catch (err) {
    if (!(err instanceof PluginBuildError)) throw err;
    process.stderr.write(`build failed (${path.resolve(dir)}): ${err.file ? `${err.file}: ` : ''}${err.message}\n`);
    return 1;
  }
}

export async function runPluginTest(args: ParsedArgs): Promise<number> {
  const dir = args.positionals[2];
  if (!dir) throw fail('GW_ERR_CLI_USAGE', { message: 'usage: workbench plugin test DIR [--fixtures F]' });
  const fixtures = stringFlag(args, 'fixtures');
  try {
    const outcomes = await testPlugin({
      dir,
      ...(fixtures !== undefined ? { fixturesDir: path.resolve(fixtures) } : {}),
      write: (line) => process.stdout.write(`${line}\n`),
    });
    return outcomes.every((o) => o.problems.length === 0) ? 0 : 1;
  } catch (err) {
    if (!(err instanceof PluginBuildError) && !(err instanceof FixtureError)) throw err;
    const file = err instanceof PluginBuildError && err.file ? `${err.file}: ` : '';
    process.stderr.write(`plugin test failed (${path.resolve(dir)}): ${file}${err.message}\n`);
    return 1;
  }
}

export function runPluginLink(args: ParsedArgs): number {
  const dir = args.positionals[2];
  if (!dir) throw fail('GW_ERR_CLI_USAGE', { message: 'usage: workbench plugin link DIR' });
  process.stdout.write(`${linkWorkbench(path.resolve(dir))}\n`);
  return 0;
}
