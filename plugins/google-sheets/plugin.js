/**
 * @module plugins/google-sheets/plugin
 * Google Sheets API v4 tools acting as the connected Google user (OAuth 2.0), on
 * https://sheets.googleapis.com/v4/spreadsheets. Self-contained (the plugin format allows no
 * imports), so the one error mapping, the A1-notation helper, the row checks and the result
 * shapers live beside the handlers. The gateway adds the Bearer token: this code never sets it.
 */

const API = 'https://sheets.googleapis.com/v4/spreadsheets';
const SCOPE = 'https://www.googleapis.com/auth/spreadsheets';
/** cells one write may carry (rows × their widest row); the schema bounds rows and columns too */
const MAX_WRITE_CELLS = 20000;
/** characters in one cell (Google's own limit is 50,000) */
const MAX_CELL_CHARS = 50000;

// ---------------------------------------------------------------------------------------------
// Errors: the one place where a Google answer becomes a message an agent can act on.

/** Google's error body: {error: {code, message, status, errors: [{reason}], details: [{reason}]}}. */
function parseGoogleError(text) {
  let body;
  try {
    body = JSON.parse(text || '{}');
  } catch {
    return { message: String(text || '').trim().slice(0, 300), status: '', reasons: [] };
  }
  const e = body && typeof body.error === 'object' && body.error ? body.error : {};
  const reasons = [];
  for (const x of Array.isArray(e.errors) ? e.errors : []) if (x && typeof x.reason === 'string') reasons.push(x.reason);
  for (const x of Array.isArray(e.details) ? e.details : []) if (x && typeof x.reason === 'string') reasons.push(x.reason);
  const message = typeof e.message === 'string' ? e.message : typeof body.error === 'string' ? body.error : '';
  return { message: message.trim().slice(0, 500), status: typeof e.status === 'string' ? e.status : '', reasons };
}

const RATE_REASONS = ['userRateLimitExceeded', 'rateLimitExceeded', 'RATE_LIMIT_EXCEEDED'];
const SCOPE_REASONS = ['insufficientPermissions', 'ACCESS_TOKEN_SCOPE_INSUFFICIENT', 'insufficientScopes'];

function sheetsError(res, text, action) {
  const { message, status, reasons } = parseGoogleError(text);
  const code = res.status;
  const said = message ? ` Google said: ${message.replace(/[.\s]+$/, '')}.` : '';
  if (code === 401) {
    return new Error(`Google rejected the access token (401) while trying to ${action}: reconnect google-sheets.${said}`);
  }
  if (code === 429 || status === 'RESOURCE_EXHAUSTED' || (code === 403 && reasons.some((r) => RATE_REASONS.includes(r)))) {
    const after = res.headers.get('retry-after');
    const wait = after && /^\d+$/.test(after.trim()) ? `retry after ${Number(after)} seconds` : 'Sheets quotas are per minute: wait a minute and retry';
    return new Error(`Google Sheets rate limited the request to ${action} (${code}): ${wait}.`);
  }
  if (code === 403 && (reasons.some((r) => SCOPE_REASONS.includes(r)) || /insufficient authentication scopes/i.test(message))) {
    return new Error(`The google-sheets connection lacks the OAuth scope needed to ${action} (403; needs ${SCOPE}): reconnect google-sheets and approve access to spreadsheets.`);
  }
  if (code === 403) {
    return new Error(`Google Sheets refused to ${action} (403): ${message || 'your Google account lacks access to this spreadsheet'}. Ask its owner to share it with you (editor access to change it).`);
  }
  if (code === 404) {
    return new Error(`Google Sheets found nothing while trying to ${action} (404): ${message || 'no such spreadsheet'}. Check the spreadsheet id.`);
  }
  if (code === 400 || code === 409 || code === 422) {
    return new Error(`Google Sheets refused to ${action} (${code}): ${message || 'the request was not valid'}.`);
  }
  if (code >= 500) return new Error(`Google Sheets had a server error (${code}) while trying to ${action}: retry later.${said}`);
  return new Error(`Google Sheets answered HTTP ${code} while trying to ${action}.${said}`);
}

// ---------------------------------------------------------------------------------------------
// Requests

/** encodeURIComponent, but a lone surrogate becomes U+FFFD (as URLSearchParams does) instead of a URIError */
const enc = (s) => encodeURIComponent(String(s).toWellFormed());

function qs(params) {
  const parts = [];
  for (const [k, v] of Object.entries(params || {})) {
    if (v === undefined || v === null || v === '') continue;
    parts.push(`${enc(k)}=${enc(v)}`);
  }
  return parts.length ? `?${parts.join('&')}` : '';
}

async function sheets(ctx, method, path, { query, body, action }) {
  const init = { method, headers: { accept: 'application/json' } };
  if (body !== undefined) {
    init.headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await ctx.http(API + path + qs(query), init);
  } catch (err) {
    if (err && err.code === 'GW_ERR_BRIDGE_RESPONSE_TOO_LARGE') throw new Error(`The answer to ${action} was larger than the gateway accepts: read a smaller range.`);
    if (err && err.code === 'GW_ERR_BRIDGE_TIMEOUT') throw new Error(`Google Sheets did not answer in time while trying to ${action}: retry, or use a smaller range.`);
    throw err;
  }
  const text = await res.text();
  if (!res.ok) throw sheetsError(res, text, action);
  if (!text) return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`Google Sheets answered ${res.status} with something that is not JSON while trying to ${action}.`);
  }
}

/** A spreadsheet id, or the id inside its URL (https://docs.google.com/spreadsheets/d/<id>/edit…). */
function spreadsheetIdOf(value) {
  const s = String(value || '').trim();
  const m = /\/spreadsheets\/d\/([A-Za-z0-9_-]+)/.exec(s);
  const id = m ? m[1] : s;
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(id)) throw new Error(`spreadsheetId "${s.slice(0, 100)}" is neither a spreadsheet id nor a Google Sheets link.`);
  return id;
}

// ---------------------------------------------------------------------------------------------
// A1 notation

/**
 * A sheet title as the sheet part of an A1 range: always in single quotes, a quote inside it
 * doubled, so that a title with spaces, quotes, "!" or one that looks like a cell (A1) or a
 * number still names that sheet: Sales → 'Sales', Q1 Budget → 'Q1 Budget', Bob's → 'Bob''s'.
 */
function quoteSheet(title) {
  return `'${String(title).replace(/'/g, "''")}'`;
}

/** The A1 range of a call: `sheet` (a title) and `range` (cells), or `range` alone (full A1 or a named range). */
function a1(args) {
  const sheet = args.sheet;
  const cells = args.range === undefined ? '' : String(args.range).trim();
  if (sheet !== undefined) {
    if (cells.includes('!')) throw new Error('With sheet set, give range as cells only (e.g. A1:D20), without a sheet name.');
    return cells ? `${quoteSheet(sheet)}!${cells}` : quoteSheet(sheet);
  }
  if (!cells) throw new Error('Give sheet (a sheet title), range (A1 notation such as \'Sheet 1\'!A1:D20), or both.');
  // "." and ".." would be dot segments of the URL (resolved away: another endpoint); no range is only dots
  if (/^\.+$/.test(cells)) throw new Error(`range "${cells}" is not an A1 range or a named range.`);
  return cells;
}

// ---------------------------------------------------------------------------------------------
// Rows

/** Checks that rows are arrays of scalars within bounds; answers the widest row's length. */
function checkRows(rows) {
  if (!Array.isArray(rows) || rows.length === 0) throw new Error('values must hold at least one row.');
  let width = 0;
  rows.forEach((row, i) => {
    if (!Array.isArray(row)) throw new Error(`values[${i}] must be an array of cell values (one row).`);
    row.forEach((cell, j) => {
      const t = cell === null ? 'null' : typeof cell;
      if (t !== 'string' && t !== 'number' && t !== 'boolean' && t !== 'null') {
        throw new Error(`values[${i}][${j}] must be a string, number, boolean or null, not ${Array.isArray(cell) ? 'an array' : t}.`);
      }
      if (t === 'number' && !Number.isFinite(cell)) throw new Error(`values[${i}][${j}] must be a finite number.`);
      if (t === 'string' && cell.length > MAX_CELL_CHARS) throw new Error(`values[${i}][${j}] has more than ${MAX_CELL_CHARS} characters, the most a cell holds.`);
    });
    width = Math.max(width, row.length);
  });
  if (rows.length * width > MAX_WRITE_CELLS) {
    throw new Error(`${rows.length} rows × ${width} columns is more than ${MAX_WRITE_CELLS} cells in one call: split the write.`);
  }
  return width;
}

const updateResult = (u) => ({
  updatedRange: u.updatedRange ?? null,
  updatedRows: u.updatedRows ?? 0,
  updatedColumns: u.updatedColumns ?? 0,
  updatedCells: u.updatedCells ?? 0,
});

const slimSheet = (s) => {
  const p = (s && s.properties) || {};
  const g = p.gridProperties || {};
  return {
    sheetId: p.sheetId ?? null,
    title: p.title ?? null,
    index: p.index ?? null,
    type: p.sheetType ?? 'GRID',
    rows: g.rowCount ?? null,
    columns: g.columnCount ?? null,
    frozenRows: g.frozenRowCount ?? 0,
    frozenColumns: g.frozenColumnCount ?? 0,
    ...(p.hidden ? { hidden: true } : {}),
  };
};

// ---------------------------------------------------------------------------------------------
// Handlers

const SPREADSHEET_FIELDS =
  'spreadsheetId,spreadsheetUrl,properties(title,locale,timeZone),' +
  'sheets(properties(sheetId,title,index,sheetType,hidden,gridProperties(rowCount,columnCount,frozenRowCount,frozenColumnCount))),namedRanges(name)';

async function getSpreadsheet(ctx, a) {
  const id = spreadsheetIdOf(a.spreadsheetId);
  const s = await sheets(ctx, 'GET', `/${enc(id)}`, { query: { fields: SPREADSHEET_FIELDS }, action: `read spreadsheet ${id}` });
  const p = s.properties || {};
  return {
    spreadsheetId: s.spreadsheetId || id,
    title: p.title ?? null,
    url: s.spreadsheetUrl ?? null,
    locale: p.locale ?? null,
    timeZone: p.timeZone ?? null,
    sheets: Array.isArray(s.sheets) ? s.sheets.map(slimSheet) : [],
    namedRanges: Array.isArray(s.namedRanges) ? s.namedRanges.map((n) => n.name).filter(Boolean) : [],
  };
}

async function readValues(ctx, a) {
  const id = spreadsheetIdOf(a.spreadsheetId);
  const range = a1(a);
  const data = await sheets(ctx, 'GET', `/${enc(id)}/values/${enc(range)}`, {
    query: {
      majorDimension: a.majorDimension || 'ROWS',
      valueRenderOption: a.valueRenderOption || 'FORMATTED_VALUE',
      dateTimeRenderOption: a.valueRenderOption === 'UNFORMATTED_VALUE' ? 'FORMATTED_STRING' : undefined,
    },
    action: `read ${range} of spreadsheet ${id}`,
  });
  const all = Array.isArray(data.values) ? data.values : [];
  const max = a.maxRows ?? 1000;
  const values = all.slice(0, max);
  const out = { range: data.range ?? range, majorDimension: data.majorDimension || a.majorDimension || 'ROWS', values, count: values.length };
  if (all.length > max) {
    out.truncated = true;
    out.note = `Only the first ${max} of ${all.length} ${out.majorDimension === 'COLUMNS' ? 'columns' : 'rows'} are returned: read a narrower range for the rest.`;
  }
  return out;
}

async function appendRows(ctx, a) {
  const id = spreadsheetIdOf(a.spreadsheetId);
  checkRows(a.values);
  const range = a1(a);
  const data = await sheets(ctx, 'POST', `/${enc(id)}/values/${enc(range)}:append`, {
    query: { valueInputOption: a.valueInputOption || 'USER_ENTERED', insertDataOption: a.insertDataOption || 'INSERT_ROWS' },
    body: { majorDimension: 'ROWS', values: a.values },
    action: `append rows to ${range} of spreadsheet ${id}`,
  });
  return { spreadsheetId: data.spreadsheetId || id, tableRange: data.tableRange ?? null, ...updateResult(data.updates || {}) };
}

async function updateValues(ctx, a) {
  const id = spreadsheetIdOf(a.spreadsheetId);
  checkRows(a.values);
  const range = a1(a);
  const data = await sheets(ctx, 'PUT', `/${enc(id)}/values/${enc(range)}`, {
    query: { valueInputOption: a.valueInputOption || 'USER_ENTERED' },
    body: { majorDimension: a.majorDimension || 'ROWS', values: a.values },
    action: `write ${range} of spreadsheet ${id}`,
  });
  return { spreadsheetId: data.spreadsheetId || id, ...updateResult(data) };
}

async function clearValues(ctx, a) {
  const id = spreadsheetIdOf(a.spreadsheetId);
  const range = a1(a);
  const data = await sheets(ctx, 'POST', `/${enc(id)}/values/${enc(range)}:clear`, { body: {}, action: `clear ${range} of spreadsheet ${id}` });
  return { spreadsheetId: data.spreadsheetId || id, clearedRange: data.clearedRange ?? range };
}

async function createSpreadsheet(ctx, a) {
  const titles = a.sheets || [];
  const seen = new Set();
  for (const t of titles) {
    const k = t.toLowerCase();
    if (seen.has(k)) throw new Error(`Sheet title "${t}" is given twice: sheet titles must be unique (ignoring case).`);
    seen.add(k);
  }
  const properties = { title: a.title };
  if (a.locale) properties.locale = a.locale;
  if (a.timeZone) properties.timeZone = a.timeZone;
  const body = { properties };
  if (titles.length) body.sheets = titles.map((title) => ({ properties: { title } }));
  const s = await sheets(ctx, 'POST', '', {
    query: { fields: 'spreadsheetId,spreadsheetUrl,properties(title),sheets(properties(sheetId,title,index,sheetType,gridProperties(rowCount,columnCount)))' },
    body,
    action: `create the spreadsheet "${a.title}"`,
  });
  return {
    spreadsheetId: s.spreadsheetId,
    title: (s.properties && s.properties.title) ?? a.title,
    url: s.spreadsheetUrl ?? null,
    sheets: Array.isArray(s.sheets) ? s.sheets.map(slimSheet) : [],
  };
}

async function addSheet(ctx, a) {
  const id = spreadsheetIdOf(a.spreadsheetId);
  const properties = { title: a.title };
  if (a.index !== undefined) properties.index = a.index;
  if (a.rows !== undefined || a.columns !== undefined) {
    properties.gridProperties = {};
    if (a.rows !== undefined) properties.gridProperties.rowCount = a.rows;
    if (a.columns !== undefined) properties.gridProperties.columnCount = a.columns;
  }
  const data = await sheets(ctx, 'POST', `/${enc(id)}:batchUpdate`, {
    body: { requests: [{ addSheet: { properties } }] },
    action: `add the sheet "${a.title}" to spreadsheet ${id}`,
  });
  const reply = Array.isArray(data.replies) && data.replies[0] && data.replies[0].addSheet;
  return { spreadsheetId: data.spreadsheetId || id, ...slimSheet(reply || { properties }) };
}

export default {
  sheets_get_spreadsheet: getSpreadsheet,
  sheets_read_values: readValues,
  sheets_append_rows: appendRows,
  sheets_update_values: updateValues,
  sheets_clear_values: clearValues,
  sheets_create_spreadsheet: createSpreadsheet,
  sheets_add_sheet: addSheet,
};
