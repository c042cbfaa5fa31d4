/**
 * @module test/helpers/reload-plugins
 * Plugin folders written by the reload tests, one version at a time: plugin "relo" answers which
 * version of its code ran (relo_version at once, relo_slow after an upstream answers), and later
 * versions add tools. Each version is a real folder of manifest.json and plugin.js, as an operator
 * installs one.
 */
import fs from 'node:fs';
import path from 'node:path';

export interface ReloVersion {
  /** the manifest's version */
  version: string;
  /** what the handlers answer as `code` (so a test sees which code ran, whatever the version says) */
  code: number;
  /** extra tool names (each answers {code}) */
  extraTools?: string[];
}

const tool = (name: string, description: string) => ({
  name,
  description,
  inputSchema: { type: 'object', properties: {} },
});

/** Writes plugin "relo" into `dir` (replacing what is there). */
export function writeRelo(dir: string, v: ReloVersion): void {
  const extra = v.extraTools ?? [];
  const manifest = {
    name: 'relo',
    version: v.version,
    displayName: 'Reload test',
    description: 'Test plugin for plugin reloads: says which version of its code answered.',
    auth: { type: 'none' },
    egress: ['api.relo.test'],
    tools: [
      tool('relo_version', 'Answers which version of the plugin code ran.'),
      tool('relo_slow', 'Waits for the reload test API, then answers which version of the plugin code ran.'),
      ...extra.map((t) => tool(t, `A tool added in code ${v.code}: answers the code.`)),
    ],
  };
  const handlers = [
    `async relo_version() { return { code: ${v.code} }; }`,
    `async relo_slow(ctx) { const res = await ctx.http('https://api.relo.test/hold'); return { code: ${v.code}, upstream: res.status }; }`,
    ...extra.map((t) => `async ${t}() { return { code: ${v.code}, tool: '${t}' }; }`),
  ];
  writeFolder(dir, manifest, `export default {\n  ${handlers.join(',\n  ')},\n};\n`);
}

/** Writes a plugin folder of a manifest (an object, or text as it is) and a plugin.js. */
export function writeFolder(dir: string, manifest: unknown, source: string): void {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    path.join(dir, 'manifest.json'),
    typeof manifest === 'string' ? manifest : JSON.stringify(manifest, null, 2),
  );
  fs.writeFileSync(path.join(dir, 'plugin.js'), source);
}

/** A plugin of one tool `<name>_ping` answering {pong: name}. */
export function writePing(dir: string, name: string): void {
  const manifest = {
    name,
    version: '1.0.0',
    displayName: name,
    description: `Test plugin ${name}.`,
    auth: { type: 'none' },
    egress: [],
    tools: [tool(`${name}_ping`, 'Answers pong.')],
  };
  writeFolder(dir, manifest, `export default { async ${name}_ping() { return { pong: '${name}' }; } };\n`);
}
