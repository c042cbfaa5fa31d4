/**
 * @module test/host/plugin-sdk/strip-schemas.unit.test
 * The runtime bundle leaves zod schemas out of a plugin's own code (they would run on every call):
 * chains rooted at the imported `z` and at variables holding one become the stand-in `z`; other
 * code is left exactly as it was; nothing is stripped without a `z` import.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { stripSchemas } from '../../../host/plugin-sdk/strip-schemas.js';

describe('stripSchemas', () => {
  test('chains rooted at z, and at variables holding one, become z; handlers are untouched', () => {
    const js = `import { definePlugin, defineTool, z } from 'workbench/plugin-sdk';
const id = z.string().min(1).describe('An id');
const task = id.describe('Task id');
const shared = { page: z.int().min(1).default(1) };
const handler = async (ctx, args) => ({ n: args.page + 1, s: "z.string()" });
export default definePlugin({ tools: { t: defineTool({ description: 'd', input: z.object({ id, task, ...shared }), handler }) } });
`;
    const out = stripSchemas(js);
    assert.equal(
      out,
      `import { definePlugin, defineTool, z } from 'workbench/plugin-sdk';
const id = z;
const task = z;
const shared = { page: z };
const handler = async (ctx, args) => ({ n: args.page + 1, s: "z.string()" });
export default definePlugin({ tools: { t: defineTool({ description: 'd', input: z, handler }) } });
`,
    );
  });

  test('an aliased import and zod itself are recognised; other roots are not', () => {
    const js = `import { z as s } from 'workbench/plugin-sdk';\nimport * as zod from 'zod';\nconst a = s.string();\nconst b = zod.number().max(3);\nconst c = other.string().min(1);\n`;
    assert.equal(
      stripSchemas(js),
      `import { z as s } from 'workbench/plugin-sdk';\nimport * as zod from 'zod';\nconst a = s;\nconst b = s;\nconst c = other.string().min(1);\n`,
    );
    const ns = `import * as zod from 'zod';\nconst b = zod.number().max(3);\n`;
    assert.equal(stripSchemas(ns), `import * as zod from 'zod';\nconst b = zod.z;\n`);
  });

  test('a chain that runs a schema is left as it is (the stand-in then says to build with --keep-zod)', () => {
    const js = `import { z } from 'workbench/plugin-sdk';\nconst S = z.object({ a: z.string() });\nexport const f = (x) => S.parse(x);\nexport const g = (x) => z.string().safeParse(x);\n`;
    assert.equal(
      stripSchemas(js),
      `import { z } from 'workbench/plugin-sdk';\nconst S = z;\nexport const f = (x) => S.parse(x);\nexport const g = (x) => z.safeParse(x);\n`,
    );
  });

  test('a file that does not import z is returned as it is', () => {
    const js = `const z = { string: () => 1 };\nexport const x = z.string();\n`;
    assert.equal(stripSchemas(js), js);
  });
});
