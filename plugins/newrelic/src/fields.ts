/**
 * @module plugins/newrelic/src/fields
 * The arguments several New Relic tools share, with the words an agent reads for them.
 */
import { z } from 'workbench/plugin-sdk';

/** An entity guid (base64-like). */
export const guid = z.string().regex(new RegExp('^[A-Za-z0-9+/=_-]{8,200}$'));
export const accountId = z.int().min(1);
/** The account of an account-scoped tool, which falls back to the connection's default. */
export const defaultedAccount = accountId.optional().describe("Account; defaults to the connection's default account.");
/** "Only … of this account." */
export const onlyAccount = (what: string) => accountId.optional().describe(`Only ${what} of this account.`);
export const nameContains = (what: string) =>
  z.string().min(1).max(200).optional().describe(`Only ${what} whose name contains this.`);
export const cursor = z.string().max(4000).optional().describe('The `next` value of the previous page.');
export const sinceHours = z.int().min(1).max(720).default(24).describe('How far back to look, in hours.');
