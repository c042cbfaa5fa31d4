/**
 * @module host/connections/apikey-fields
 * Validates submitted API-key fields against the manifest's field list: required, enum, pattern,
 * length, and the records of a records field (records-field.ts). Secret fields go to the encrypted
 * secret; the others become the connection's non-secret config (`ctx.config`), as do a records
 * field's records without their secret parts. Every problem is reported per field, in words a
 * person can act on.
 */
import type { RE2JS } from 're2js';
import { compilePattern } from '../registry/patterns.js';
import type { ApiKeyField } from '../../contracts/manifest.js';
import { validateRecords } from './records-field.js';

export interface ApiKeyValidation {
  secret: Record<string, string>;
  /** non-secret texts, and a records field's public records (a list) */
  config: Record<string, string | Array<Record<string, string>>>;
  /** field name → problem; empty when valid */
  errors: Record<string, string>;
}

const MAX_VALUE_CHARS = 4096;

const compiled = new Map<string, RE2JS | null>();

/**
 * The whole value matches the manifest's pattern. Checked with RE2 (linear in the value), like
 * every other pattern from a manifest (host/registry/patterns.ts): a backtracking RegExp on a
 * pattern such as `([a-z0-9]+-?)*` took seconds for 27 characters, on the event loop every tenant
 * shares. A pattern RE2 cannot compile (lookaround, backreferences, bad syntax) refuses the plugin
 * at load (host/registry/load-plugins.ts), with the same compiler; should one reach this function
 * anyway, it matches nothing.
 */
function matches(pattern: string, value: string): boolean {
  let re = compiled.get(pattern);
  if (re === undefined) {
    try {
      re = compilePattern(pattern);
    } catch {
      re = null;
    }
    if (compiled.size < 1000) compiled.set(pattern, re);
  }
  return re !== null && re.matches(value);
}

export function validateApiKeyFields(fields: readonly ApiKeyField[], input: Record<string, unknown>): ApiKeyValidation {
  const out: ApiKeyValidation = { secret: {}, config: {}, errors: {} };
  const known = new Set(fields.map((f) => f.name));
  for (const name of Object.keys(input)) if (!known.has(name)) out.errors[name] = `unknown field "${name}"`;
  for (const f of fields) {
    const raw = input[f.name];
    if (f.records) {
      const r = validateRecords(f, raw);
      if ('error' in r) out.errors[f.name] = r.error;
      else if (r.secret !== undefined) {
        out.secret[f.name] = r.secret;
        out.config[f.name] = r.config;
      }
      continue;
    }
    let value = typeof raw === 'string' ? raw : raw === undefined || raw === null ? '' : undefined;
    if (value === undefined) {
      out.errors[f.name] = `${f.label} must be text`;
      continue;
    }
    // Secrets are kept exactly as typed except surrounding whitespace, a common paste artefact.
    value = value.trim();
    if (value === '' && f.default !== undefined) value = f.default;
    if (value === '') {
      if (f.required) out.errors[f.name] = `${f.label} is required`;
      continue;
    }
    if (value.length > MAX_VALUE_CHARS)
      out.errors[f.name] = `${f.label} is too long (at most ${MAX_VALUE_CHARS} characters)`;
    else if (/[\u0000-\u001f\u007f]/.test(value))
      out.errors[f.name] = `${f.label} contains control characters (line breaks, tabs); paste it again`;
    else if (f.enum && !f.enum.includes(value)) out.errors[f.name] = `${f.label} must be one of: ${f.enum.join(', ')}`;
    else if (f.pattern && !matches(f.pattern, value))
      out.errors[f.name] = `${f.label} does not have the expected format`;
    else (f.secret ? out.secret : out.config)[f.name] = value;
  }
  return out;
}
