/**
 * @module host/plugin-sdk/fixtures
 * The fixtures `workbench plugin test` runs: files under a plugin's `fixtures/` folder, each one
 * case or a list of them. A case names a tool and its arguments, the requests the tool must make
 * with the answers the provider gave (recorded from the real API, e.g. with curl), and what the
 * tool must return or the error it must fail with. Read and checked here, with messages that name
 * the file, the case and the field.
 */
import fs from 'node:fs';
import path from 'node:path';
import * as z from 'zod';
import { describeIssues } from '../../contracts/manifest.js';
import { WorkbenchError } from '../../contracts/errors.js';

const json = z.json();

const requestSchema = z.strictObject({
  method: z
    .string()
    .regex(/^[A-Z]+$/, 'an HTTP method in capitals, e.g. "GET"')
    .default('GET'),
  /** the whole URL the tool asks for, e.g. https://api.example.com/v1/items?limit=10 */
  url: z.string().regex(/^https:\/\/[^/?#]+/, 'a whole https URL, e.g. "https://api.example.com/v1/items"'),
  /** headers the request must carry (names in any case; values exactly) */
  headers: z.record(z.string(), z.string()).optional(),
  /** the JSON body the request must carry */
  json: json.optional(),
  /** the text body the request must carry */
  body: z.string().optional(),
});

const responseSchema = z.strictObject({
  status: z.int().min(100).max(599).default(200),
  headers: z.record(z.string(), z.string()).default({}),
  json: json.optional(),
  body: z.string().optional(),
});

const expectSchema = z.union([z.strictObject({ result: json }), z.strictObject({ error: z.string().min(1) })]);

export const fixtureCaseSchema = z.strictObject({
  name: z.string().max(200).optional(),
  tool: z.string().min(1),
  args: z.record(z.string(), json).default({}),
  /** the connection's non-secret values (ctx.config) for this case */
  config: z.record(z.string(), json).optional(),
  exchanges: z
    .array(z.strictObject({ request: requestSchema, response: responseSchema }))
    .max(100)
    .default([]),
  expect: expectSchema,
});

export type FixtureCase = z.output<typeof fixtureCaseSchema> & { file: string; index: number };
export type FixtureRequest = z.output<typeof requestSchema>;

/** A fixture file that is not JSON or not of the documented shape. */
export class FixtureError extends WorkbenchError<'GW_ERR_PLUGIN_TEST_FAILED'> {
  override name = 'FixtureError';
  constructor(message: string) {
    super('GW_ERR_PLUGIN_TEST_FAILED', message);
  }
}

/** Every case of every `*.json` file under `dir`, in file-name order. */
export function readFixtures(dir: string): FixtureCase[] {
  if (!fs.existsSync(dir))
    throw new FixtureError(
      `${dir}: no fixtures folder (put one JSON file per tool there; docs/plugins.md shows the shape)`,
    );
  const files = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort();
  if (files.length === 0) throw new FixtureError(`${dir}: no *.json fixture files`);
  return files.flatMap((file) => readFile(path.join(dir, file)));
}

function readFile(file: string): FixtureCase[] {
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new FixtureError(`${path.basename(file)}: not JSON: ${(err as Error).message}`);
  }
  const list = Array.isArray(raw) ? raw : [raw];
  return list.map((item, index) => {
    const parsed = fixtureCaseSchema.safeParse(item);
    if (!parsed.success)
      throw new FixtureError(
        `${path.basename(file)}${Array.isArray(raw) ? ` case ${index + 1}` : ''}: ${describeIssues(parsed.error)}`,
      );
    return { ...parsed.data, file: path.basename(file), index };
  });
}
