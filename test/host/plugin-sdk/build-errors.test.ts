/**
 * @module test/host/plugin-sdk/build-errors.test
 * Bad plugin sources give clear errors that name the file, the import or the tool, and nothing is
 * written: a Node built-in import, a tool name that is not snake_case, no default export, a
 * default export that is not a plugin, a schema JSON Schema cannot express, a bad manifest field,
 * a definition that throws, a missing plugin.ts, a TypeScript syntax error.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { buildPlugin, PluginBuildError } from '../../../host/plugin-sdk/build.js';
import { echoTool, pluginSource, removeTempDirs, tempDir, writePlugin } from '../../helpers/temp-plugin.js';

after(() => removeTempDirs());

/** Builds `dir` into a fresh out dir and returns the error it fails with; asserts nothing was written. */
async function buildError(dir: string): Promise<PluginBuildError> {
  const outDir = path.join(tempDir(), 'out');
  try {
    await buildPlugin({ dir, outDir, evaluationTimeoutMs: 1_000 });
  } catch (err) {
    assert.ok(err instanceof PluginBuildError, `expected a PluginBuildError, got ${String(err)}`);
    assert.equal(err.code, 'GW_ERR_PLUGIN_BUILD_FAILED');
    assert.equal(fs.existsSync(outDir), false, 'nothing is written when the build fails');
    return err;
  }
  assert.fail('the build succeeded');
}

describe('plugin build evaluates plugin.ts as the sandbox runs it', () => {
  test("top-level code may use the sandbox's URLSearchParams, atob and btoa", async () => {
    const dir = writePlugin(
      pluginSource(
        echoTool(),
        "const QUERY = new URLSearchParams({ q: 'a b' }).toString() + '&' + btoa(atob('eA=='));\nvoid QUERY;",
      ),
    );
    const outDir = path.join(tempDir(), 'out');
    await buildPlugin({ dir, outDir, evaluationTimeoutMs: 5_000 });
    assert.ok(fs.existsSync(path.join(outDir, 'manifest.json')));
  });
});

describe('plugin build refuses bad sources with clear errors', () => {
  test('an import of node:fs names the import and where it is', async () => {
    const dir = writePlugin(pluginSource(echoTool(), "import { readFileSync } from 'node:fs';\nvoid readFileSync;"));
    const err = await buildError(dir);
    assert.match(
      err.message,
      /^plugin\.ts:2:\d+: import "node:fs" is not allowed: plugin code runs in an isolate without Node\.js built-ins/,
    );
  });

  test('a bare built-in name (crypto) in a helper file is refused too', async () => {
    const dir = writePlugin(pluginSource(echoTool(), "import { id } from './helper.ts';\nvoid id;"), {
      'helper.ts': "import { randomUUID } from 'crypto';\nexport const id = () => randomUUID();\n",
    });
    const err = await buildError(dir);
    assert.match(err.message, /helper\.ts:1:\d+: import "crypto" is not allowed/);
  });

  test('an unknown package is named', async () => {
    const dir = writePlugin(pluginSource(echoTool(), "import left from 'left-pad-not-installed';\nvoid left;"));
    assert.match((await buildError(dir)).message, /plugin\.ts:2:\d+: .*"left-pad-not-installed"/);
  });

  test('a tool name that is not snake_case names the tool and suggests one', async () => {
    const dir = writePlugin(pluginSource(echoTool('listItems')));
    const err = await buildError(dir);
    assert.equal(err.file, 'plugin.ts');
    assert.match(err.message, /tool "listItems": tool names must be snake_case .* e\.g\. "list_items"/);
  });

  test('no default export', async () => {
    const dir = writePlugin(
      pluginSource(echoTool()).replace('export default definePlugin', 'export const plugin = definePlugin'),
    );
    const err = await buildError(dir);
    assert.match(err.message, /plugin\.ts has no default export: end it with `export default definePlugin\(\{ … \}\)`/);
  });

  test('a default export that is not made by definePlugin', async () => {
    const dir = writePlugin('export default { temp_echo: async () => ({}) };\n');
    assert.match((await buildError(dir)).message, /the default export is not a plugin/);
  });

  test('a tool not made by defineTool, and a schema that is not an object', async () => {
    const plain = writePlugin(
      pluginSource("    temp_echo: { description: 'x', input: z.object({}), handler: async () => ({}) } as never,"),
    );
    assert.match((await buildError(plain)).message, /tool "temp_echo": define it with defineTool/);
    const notObject = writePlugin(pluginSource(echoTool('temp_echo', 'z.string() as never')));
    assert.match((await buildError(notObject)).message, /tool "temp_echo": input must be a zod object schema/);
  });

  test('a schema JSON Schema cannot express names the tool', async () => {
    const dir = writePlugin(pluginSource(echoTool('temp_when', 'z.object({ at: z.date() })')));
    assert.match(
      (await buildError(dir)).message,
      /tool "temp_when": input cannot be expressed as JSON Schema: Date cannot be represented/,
    );
  });

  test('a transform, pipe, preprocess, refinement or trim in an input schema is refused: the gateway would never apply it', async () => {
    const cases: [string, RegExp][] = [
      [
        'z.object({ title: z.string().transform((v) => v.trim()) })',
        /^tool "temp_echo": input\.title uses \.transform\(\): the manifest is written from the schema's input side, so the gateway never runs it .*take the raw value and convert it in the handler$/,
      ],
      ['z.object({ n: z.string().pipe(z.coerce.number()) })', /input\.n uses \.pipe\(\)/],
      ['z.object({ n: z.preprocess((v) => Number(v), z.number()) })', /input\.n uses z\.preprocess\(\)/],
      [
        'z.object({ tags: z.array(z.string().refine((v) => v.length > 0)).optional() })',
        /input\.tags\[\] uses \.refine\(\) or \.superRefine\(\): JSON Schema cannot carry the check/,
      ],
      [
        'z.object({ a: z.number(), b: z.number() }).refine((v) => v.a < v.b)',
        /^tool "temp_echo": input uses \.refine\(\)/,
      ],
      ['z.object({ title: z.string().trim().default("x") })', /input\.title uses \.trim\(\), \.toLowerCase\(\)/],
    ];
    for (const [input, message] of cases) {
      const err = await buildError(writePlugin(pluginSource(echoTool('temp_echo', input))));
      assert.equal(err.file, 'plugin.ts');
      assert.match(err.message, message, input);
    }
  });

  test('manifest fields are checked with the manifest schema', async () => {
    const dir = writePlugin(
      pluginSource(echoTool())
        .replace("name: 'temp'", "name: 'Temp Plugin'")
        .replace("egress: ['api.temp.example']", "egress: ['https://api.temp.example']"),
    );
    const err = await buildError(dir);
    assert.match(err.message, /^definePlugin: name: must be kebab-case/);
    assert.match(err.message, /egress\.0: must be a lower-case DNS host name/);
  });

  test('a definition that throws while it is evaluated', async () => {
    const dir = writePlugin(
      pluginSource(echoTool(), 'const cfg: { x?: { y: string } } = {};\nexport const broken = cfg.x!.y;'),
    );
    assert.match(
      (await buildError(dir)).message,
      /plugin\.ts threw while its definition was evaluated: .*Cannot read properties of undefined/,
    );
  });

  test('a definition that never finishes is stopped', async () => {
    const dir = writePlugin(pluginSource(echoTool(), 'for (;;) {}'));
    assert.match(
      (await buildError(dir)).message,
      /threw while its definition was evaluated: Script execution timed out/,
    );
  });

  test('a syntax error points at the line', async () => {
    const dir = writePlugin(pluginSource(echoTool(), 'const x: number = ;'));
    assert.match((await buildError(dir)).message, /^plugin\.ts:2:\d+: /);
  });

  test('a folder without plugin.ts', async () => {
    const err = await buildError(tempDir());
    assert.equal(err.file, 'plugin.ts');
    assert.match(err.message, /missing: a TypeScript plugin folder holds plugin\.ts/);
  });
});
