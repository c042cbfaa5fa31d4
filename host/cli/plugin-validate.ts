/**
 * @module host/cli/plugin-validate
 * `workbench plugin validate DIR`: reads a plugin folder as the gateway would, probes its code in a
 * short-lived sandbox, and checks it against the plugins installed beside it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pluginDirsOf } from '../config.js';
import { loadPluginDir, readPlugins, type LoadedPlugin } from '../registry/load-plugins.js';
import { clashOf } from '../registry/namespace.js';
import { createSandbox, probePlugin, type ProbeVerdict } from '../supervisor/index.js';
import { DEFAULT_POLICY_FILE } from '../paths.js';
import { sandboxLimits } from '../policy/limits.js';
import { loadPolicyFile } from '../policy/load.js';
import { fail } from '../../contracts/errors.js';

/**
 * Checks a plugin folder as start-up does: the manifest and schemas here, then plugin.js in a
 * short-lived sandbox (one worker, the policy's limits for the plugin): it must compile, evaluate
 * and export a function for every tool. The host never evaluates plugin code itself.
 */
export async function runPluginValidate(
  dir: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  if (!dir) throw fail('GW_ERR_CLI_USAGE', { message: 'usage: workbench plugin validate DIR' });
  const invalid = (file: string, message: string): number => {
    process.stderr.write(`invalid: ${file}: ${message}\n`);
    return 1;
  };
  const folder = path.resolve(dir);
  if (!fs.existsSync(path.join(folder, 'manifest.json')) && fs.existsSync(path.join(folder, 'plugin.ts'))) {
    const out = path.join(dir, 'dist');
    return invalid(
      path.join(folder, 'manifest.json'),
      `missing: this is a TypeScript plugin's source folder (plugin.ts); the gateway loads what \`workbench plugin build\` writes. Build it, then validate the output: workbench plugin build ${dir} && workbench plugin validate ${out}`,
    );
  }
  let plugin: LoadedPlugin;
  try {
    plugin = loadPluginDir(folder);
  } catch (err) {
    const e = err as Error & { file?: string };
    return invalid(e.file ?? dir, e.message);
  }
  const policy = loadPolicyFile(path.resolve(env['WORKBENCH_POLICY'] ?? DEFAULT_POLICY_FILE));
  const sandbox = await createSandbox({ workers: 1, closeGraceMs: 1000 });
  let verdict: ProbeVerdict;
  try {
    const { manifest, source, sourceHash } = plugin;
    verdict = await probePlugin(
      sandbox,
      { name: manifest.name, version: manifest.version, source, sourceHash },
      [...plugin.tools.keys()],
      sandboxLimits(policy, manifest.name),
    );
  } finally {
    await sandbox.close();
  }
  if (verdict.checked && !verdict.ok) return invalid(path.join(plugin.dir, 'plugin.js'), verdict.problem);
  if (plugin.unscanned !== undefined) return invalid(path.join(plugin.dir, 'plugin.js'), plugin.unscanned);
  if (!verdict.checked)
    process.stderr.write(`warning: plugin.js could not be checked in the sandbox: ${verdict.reason}\n`);
  const { clashes, replaces } = installedClashes(plugin, pluginDirsOf(env));
  if (clashes.length > 0)
    return invalid(
      path.join(plugin.dir, 'manifest.json'),
      `clashes with ${clashes.join('; with ')}. Installed beside it, neither would load: rename this plugin (its name, and its tool names with it) or remove the other`,
    );
  for (const q of replaces)
    process.stderr.write(
      `note: ${q.manifest.name}@${q.manifest.version} is installed in ${q.dir}: install this one in its place (two folders of one plugin would refuse both)\n`,
    );
  process.stdout.write(
    `ok: ${plugin.manifest.name}@${plugin.manifest.version}: ${plugin.tools.size} tool(s), ${plugin.source.length} bytes of source\n`,
  );
  return 0;
}

/**
 * How a plugin being validated stands with the plugins installed in the server's plugin roots (the
 * built-in ones and WORKBENCH_PLUGINS_DIR): the plugins of other names it clashes with (namespace.ts),
 * and those of its own name, which it is taken to replace. Its own folder, if installed, is left out.
 */
function installedClashes(
  plugin: LoadedPlugin,
  roots: readonly string[],
): { clashes: string[]; replaces: LoadedPlugin[] } {
  const real = (dir: string): string => fs.realpathSync(dir);
  const others = readPlugins(roots).plugins.filter((q) => real(q.dir) !== real(plugin.dir));
  const replaces = others.filter((q) => q.manifest.name === plugin.manifest.name);
  const clashes = others.flatMap((q) => {
    const why = q.manifest.name === plugin.manifest.name ? undefined : clashOf(plugin, q);
    return why === undefined ? [] : [`plugin "${q.manifest.name}" in ${q.dir}: ${why}`];
  });
  return { clashes, replaces };
}
