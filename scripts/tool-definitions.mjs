#!/usr/bin/env node
// What an agent sees of every tool — its name, description, input schema and annotations — held
// against a committed fingerprint, so that no change to a plugin's sources changes them by accident.
//
//   node scripts/tool-definitions.mjs check            compare plugins/*/manifest.json with the fingerprint
//   node scripts/tool-definitions.mjs diff --base REF  print every difference from the manifests at git REF
//   node scripts/tool-definitions.mjs snapshot         write the fingerprint anew (an intended change)
//
// --plugins DIR reads manifests from DIR instead of plugins/. Objects are compared with their keys
// sorted and `required` lists as sets: JSON Schema gives neither an order.
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const FINGERPRINT = path.join(root, 'test', 'fixtures', 'tool-definitions.json');
const FIELDS = ['description', 'inputSchema', 'annotations'];

function canonical(value, key) {
  if (Array.isArray(value)) {
    const items = value.map((v) => canonical(v));
    return key === 'required' ? [...items].sort() : items;
  }
  if (value === null || typeof value !== 'object') return value;
  const out = {};
  for (const k of Object.keys(value).sort()) out[k] = canonical(value[k], k);
  return out;
}

const hash = (value) =>
  crypto
    .createHash('sha256')
    .update(JSON.stringify(canonical(value) ?? null))
    .digest('hex')
    .slice(0, 16);

/** tool name → {plugin, description, inputSchema, annotations} from manifests read by `read(name)`. */
function toolsOf(names, read) {
  const tools = {};
  for (const name of names) {
    const text = read(name);
    if (text === undefined) continue;
    const manifest = JSON.parse(text);
    for (const tool of manifest.tools)
      tools[tool.name] = { plugin: manifest.name, ...Object.fromEntries(FIELDS.map((f) => [f, tool[f]])) };
  }
  return tools;
}

function workingTools(dir) {
  const names = fs
    .readdirSync(dir)
    .filter((n) => fs.existsSync(path.join(dir, n, 'manifest.json')))
    .sort();
  return toolsOf(names, (n) => fs.readFileSync(path.join(dir, n, 'manifest.json'), 'utf8'));
}

function baseTools(ref) {
  const listing = execFileSync('git', ['ls-tree', '--name-only', `${ref}:plugins`], { cwd: root, encoding: 'utf8' });
  const show = (n) => {
    try {
      return execFileSync('git', ['show', `${ref}:plugins/${n}/manifest.json`], {
        cwd: root,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
        maxBuffer: 64 << 20,
      });
    } catch {
      return undefined;
    }
  };
  return toolsOf(listing.split('\n').filter(Boolean), show);
}

function fingerprint(tools) {
  const out = {};
  for (const name of Object.keys(tools).sort())
    out[name] = Object.fromEntries([['plugin', tools[name].plugin], ...FIELDS.map((f) => [f, hash(tools[name][f])])]);
  return out;
}

/** Lines naming each difference between two values, by JSON path. */
function differences(a, b, at = '') {
  const ca = canonical(a);
  const cb = canonical(b);
  if (JSON.stringify(ca) === JSON.stringify(cb)) return [];
  const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
  if (isObj(ca) && isObj(cb)) {
    const keys = [...new Set([...Object.keys(ca), ...Object.keys(cb)])].sort();
    return keys.flatMap((k) => differences(ca[k], cb[k], `${at}.${k}`));
  }
  return [`${at || '.'}: ${JSON.stringify(ca)} → ${JSON.stringify(cb)}`];
}

function compare(before, after, describe) {
  const lines = [];
  for (const name of [...new Set([...Object.keys(before), ...Object.keys(after)])].sort()) {
    if (!(name in after)) lines.push(`${name}: removed`);
    else if (!(name in before)) lines.push(`${name}: added`);
    else
      for (const field of ['plugin', ...FIELDS])
        lines.push(...describe(name, field, before[name][field], after[name][field]));
  }
  return lines;
}

function flag(name) {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? process.argv[at + 1] : undefined;
}

const command = process.argv[2] ?? 'check';
const pluginsDir = path.resolve(flag('plugins') ?? path.join(root, 'plugins'));
const current = workingTools(pluginsDir);
if (command === 'snapshot') {
  fs.writeFileSync(FINGERPRINT, JSON.stringify(fingerprint(current), null, 1) + '\n');
  console.log(`wrote the fingerprint of ${Object.keys(current).length} tools`);
} else if (command === 'check') {
  const expected = JSON.parse(fs.readFileSync(FINGERPRINT, 'utf8'));
  const lines = compare(expected, fingerprint(current), (name, field, a, b) =>
    a === b ? [] : [`${name}: ${field} changed`],
  );
  if (lines.length > 0) {
    console.log(lines.join('\n'));
    console.log(
      `${lines.length} difference(s) from test/fixtures/tool-definitions.json: see them with \`node scripts/tool-definitions.mjs diff --base <ref>\`; if intended, run \`node scripts/tool-definitions.mjs snapshot\` and say so in the commit`,
    );
    process.exit(1);
  }
  console.log(`${Object.keys(current).length} tools: as fingerprinted`);
} else if (command === 'diff') {
  const ref = flag('base') ?? 'HEAD';
  const lines = compare(baseTools(ref), current, (name, field, a, b) =>
    differences(a, b).map((d) => `${name} ${field}${d}`),
  );
  console.log(
    lines.length > 0 ? lines.join('\n') : `no differences from ${ref} in ${Object.keys(current).length} tools`,
  );
  process.exit(lines.length > 0 ? 1 : 0);
} else {
  console.error('usage: node scripts/tool-definitions.mjs check|diff [--base REF]|snapshot [--plugins DIR]');
  process.exit(2);
}
