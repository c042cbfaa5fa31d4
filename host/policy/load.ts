/**
 * @module host/policy/load
 * Reads and validates the policy file. Any key may be left out (defaults apply); a file that does
 * not parse or validate stops start-up with a message naming the file, the field and the problem.
 */
import fs from 'node:fs';
import { GatewayError } from '../errors.js';
import { policySchema, type Policy } from './schema.js';
import { describeIssues } from '../../contracts/manifest.js';

export function parsePolicy(raw: unknown, source = 'policy'): Policy {
  const parsed = policySchema.safeParse(raw);
  if (!parsed.success) throw new GatewayError('GW_ERR_POLICY_INVALID', `${source}: ${describeIssues(parsed.error)}`);
  return parsed.data;
}

export function loadPolicyFile(file: string): Policy {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new GatewayError('GW_ERR_POLICY_INVALID', `${file}: cannot be read: ${(err as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new GatewayError('GW_ERR_POLICY_INVALID', `${file}: not valid JSON: ${(err as Error).message}`);
  }
  return parsePolicy(raw, file);
}
