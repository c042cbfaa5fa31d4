/**
 * @module plugins/google-sheets/src/api
 * The Google Sheets API v4 client on https://sheets.googleapis.com/v4/spreadsheets, the one
 * mapping from a failed answer to the words an agent reads, spreadsheet ids taken from ids or
 * links, and A1 ranges built from a sheet title and cells. The gateway adds the Bearer token.
 */
import {
  createApi,
  googleErrorInfo,
  googleReasonKind,
  z,
  type ApiFailure,
  type BridgeFailure,
} from 'workbench/plugin-sdk';

const SCOPE = 'https://www.googleapis.com/auth/spreadsheets';

/** Turns a failed Sheets answer into the Error the agent sees. Every request goes through it. */
function sheetsError(f: ApiFailure): Error {
  const info = googleErrorInfo(f.data);
  const { status } = info;
  const kind = googleReasonKind(info);
  const { action, detail: message } = f;
  const code = f.status;
  const said = message ? ` Google said: ${message}.` : '';
  if (code === 401)
    return new Error(
      `Google rejected the access token (401) while trying to ${action}: reconnect google-sheets.${said}`,
    );
  if (
    code === 429 ||
    status === 'RESOURCE_EXHAUSTED' ||
    (code === 403 && (kind === 'rate-limit' || kind === 'daily-limit'))
  ) {
    const wait =
      f.retryAfterSec !== undefined
        ? `retry after ${f.retryAfterSec} seconds`
        : 'Sheets quotas are per minute: wait a minute and retry';
    return new Error(`Google Sheets rate limited the request to ${action} (${code}): ${wait}.`);
  }
  if (code === 403 && (kind === 'scope' || /insufficient authentication scopes/i.test(message))) {
    return new Error(
      `The google-sheets connection lacks the OAuth scope needed to ${action} (403; needs ${SCOPE}): reconnect google-sheets and approve access to spreadsheets.`,
    );
  }
  if (code === 403) {
    return new Error(
      `Google Sheets refused to ${action} (403): ${message || 'your Google account lacks access to this spreadsheet'}. Ask its owner to share it with you (editor access to change it).`,
    );
  }
  if (code === 404)
    return new Error(
      `Google Sheets found nothing while trying to ${action} (404): ${message || 'no such spreadsheet'}. Check the spreadsheet id.`,
    );
  if (code === 400 || code === 409 || code === 422)
    return new Error(`Google Sheets refused to ${action} (${code}): ${message || 'the request was not valid'}.`);
  if (code >= 500)
    return new Error(`Google Sheets had a server error (${code}) while trying to ${action}: retry later.${said}`);
  return new Error(`Google Sheets answered HTTP ${code} while trying to ${action}.${said}`);
}

/** The gateway's refusals in Sheets' words: a smaller range is what helps. */
function bridgeWords(f: BridgeFailure): Error {
  if (f.code === 'GW_ERR_BRIDGE_RESPONSE_TOO_LARGE')
    return new Error(`The answer to ${f.action} was larger than the gateway accepts: read a smaller range.`);
  if (f.code === 'GW_ERR_BRIDGE_TIMEOUT')
    return new Error(
      `Google Sheets did not answer in time while trying to ${f.action}: retry, or use a smaller range.`,
    );
  return f.error;
}

export const api = createApi({
  base: 'https://sheets.googleapis.com/v4/spreadsheets',
  provider: 'Google Sheets',
  failure: sheetsError,
  bridgeFailure: bridgeWords,
});

export const spreadsheetId = {
  spreadsheetId: z
    .string()
    .min(1)
    .max(500)
    .describe("The spreadsheet's id, or its Google Sheets link (https://docs.google.com/spreadsheets/d/<id>/…)."),
};
export const sheet = {
  sheet: z
    .string()
    .min(1)
    .max(100)
    .optional()
    .describe('Sheet (tab) title, e.g. "Q1 Budget"; the plugin quotes it for A1 notation.'),
};

/** A spreadsheet id, or the id inside its URL (https://docs.google.com/spreadsheets/d/<id>/edit…). */
export function spreadsheetIdOf(value: string): string {
  const s = value.trim();
  const m = /\/spreadsheets\/d\/([A-Za-z0-9_-]+)/.exec(s);
  const id = m ? m[1] : s;
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(id))
    throw new Error(`spreadsheetId "${s.slice(0, 100)}" is neither a spreadsheet id nor a Google Sheets link.`);
  return id;
}

/**
 * A sheet title as the sheet part of an A1 range: always in single quotes, a quote inside it
 * doubled, so that a title with spaces, quotes, "!" or one that looks like a cell (A1) or a
 * number still names that sheet: Sales → 'Sales', Q1 Budget → 'Q1 Budget', Bob's → 'Bob''s'.
 */
const quoteSheet = (title: string): string => `'${title.replace(/'/g, "''")}'`;

/** The A1 range of a call: `sheet` (a title) and `range` (cells), or `range` alone (full A1 or a named range). */
export function a1(args: { sheet?: string; range?: string }): string {
  const cells = args.range === undefined ? '' : args.range.trim();
  if (args.sheet !== undefined) {
    if (cells.includes('!'))
      throw new Error('With sheet set, give range as cells only (e.g. A1:D20), without a sheet name.');
    return cells ? `${quoteSheet(args.sheet)}!${cells}` : quoteSheet(args.sheet);
  }
  if (!cells) throw new Error("Give sheet (a sheet title), range (A1 notation such as 'Sheet 1'!A1:D20), or both.");
  // "." and ".." would be dot segments of the URL (resolved away: another endpoint); no range is only dots
  if (/^\.+$/.test(cells)) throw new Error(`range "${cells}" is not an A1 range or a named range.`);
  return cells;
}
