/**
 * @module plugins/google-sheets/src/values
 * Cell values: read a range, append rows after a table, overwrite a range, clear a range. Rows to
 * write are checked (scalars, finite numbers, cells and calls within bounds) before any request.
 */
import { changes, defineTool, path, reads, z } from 'workbench/plugin-sdk';
import { a1, api, sheet, spreadsheetId, spreadsheetIdOf } from './api.js';

/** cells one write may carry (rows × their widest row); the schema bounds rows and columns too */
const MAX_WRITE_CELLS = 20000;
/** characters in one cell (Google's own limit is 50,000) */
const MAX_CELL_CHARS = 50000;

/** A cell: JSON Schema's `type` list, which zod has no form for. */
const cell = z.unknown().meta({ type: ['string', 'number', 'boolean', 'null'], maxLength: MAX_CELL_CHARS });
const values = {
  values: z
    .array(z.array(cell).max(500))
    .min(1)
    .max(2000)
    .describe(
      'Rows of cell values (strings, numbers, booleans; null leaves a cell unchanged, "" empties it), e.g. [["Date", "Amount"], ["2025-01-31", 42]].',
    ),
};
const valueInputOption = {
  valueInputOption: z
    .enum(['USER_ENTERED', 'RAW'])
    .default('USER_ENTERED')
    .describe('USER_ENTERED: parsed as if typed in Sheets (numbers, dates, =formulas); RAW: stored exactly as given.'),
};
const majorDimension = (description: string) => ({
  majorDimension: z.enum(['ROWS', 'COLUMNS']).default('ROWS').describe(description),
});
const optionalRange = (description: string) => ({ range: z.string().min(1).max(500).optional().describe(description) });

/** Checks that rows are arrays of scalars within bounds; answers the widest row's length. */
function checkRows(rows: unknown[][]): number {
  if (!Array.isArray(rows) || rows.length === 0) throw new Error('values must hold at least one row.');
  let width = 0;
  rows.forEach((row, i) => {
    if (!Array.isArray(row)) throw new Error(`values[${i}] must be an array of cell values (one row).`);
    row.forEach((cell, j) => {
      const t = cell === null ? 'null' : typeof cell;
      if (t !== 'string' && t !== 'number' && t !== 'boolean' && t !== 'null') {
        throw new Error(
          `values[${i}][${j}] must be a string, number, boolean or null, not ${Array.isArray(cell) ? 'an array' : t}.`,
        );
      }
      if (typeof cell === 'number' && !Number.isFinite(cell))
        throw new Error(`values[${i}][${j}] must be a finite number.`);
      if (typeof cell === 'string' && cell.length > MAX_CELL_CHARS)
        throw new Error(`values[${i}][${j}] has more than ${MAX_CELL_CHARS} characters, the most a cell holds.`);
    });
    width = Math.max(width, row.length);
  });
  if (rows.length * width > MAX_WRITE_CELLS)
    throw new Error(
      `${rows.length} rows × ${width} columns is more than ${MAX_WRITE_CELLS} cells in one call: split the write.`,
    );
  return width;
}

interface Updated {
  spreadsheetId?: string;
  updatedRange?: string;
  updatedRows?: number;
  updatedColumns?: number;
  updatedCells?: number;
}
const updateResult = (u: Updated) => ({
  updatedRange: u.updatedRange ?? null,
  updatedRows: u.updatedRows ?? 0,
  updatedColumns: u.updatedColumns ?? 0,
  updatedCells: u.updatedCells ?? 0,
});

export const readValues = defineTool({
  description:
    "Read cell values from a Google Sheets spreadsheet: a whole sheet (tab) or a range in A1 notation (A1:D20, A:C, 2:10), as rows of values. Give `sheet` (a tab title, quoted for you) and/or `range`; `range` alone may be a full A1 range (e.g. 'Sales 2025'!A1:F100) or a named range. Values come formatted as displayed by default; UNFORMATTED_VALUE gives raw numbers, FORMULA the formulas. Trailing empty rows and cells are left out by Google. Returns at most maxRows rows, with a note when cut.",
  input: z.object({
    ...spreadsheetId,
    ...sheet,
    ...optionalRange(
      "Cells in A1 notation (A1:D20, A:A, 3:3); without `sheet`, a full A1 range such as 'My Sheet'!A1:D20, or a named range. Omit with `sheet` for the whole sheet.",
    ),
    valueRenderOption: z
      .enum(['FORMATTED_VALUE', 'UNFORMATTED_VALUE', 'FORMULA'])
      .default('FORMATTED_VALUE')
      .describe(
        'How values are rendered: as displayed, raw (numbers stay numbers; dates as formatted strings), or the formulas.',
      ),
    ...majorDimension('Return rows (default) or columns.'),
    maxRows: z.int().min(1).max(5000).default(1000).describe('Rows (or columns) to return at most.'),
  }),
  annotations: reads('Read range values'),
  handler: async (ctx, a) => {
    const id = spreadsheetIdOf(a.spreadsheetId);
    const range = a1(a);
    const query = {
      majorDimension: a.majorDimension,
      valueRenderOption: a.valueRenderOption,
      dateTimeRenderOption: a.valueRenderOption === 'UNFORMATTED_VALUE' ? 'FORMATTED_STRING' : undefined,
    };
    const data = await api.json<{ range?: string; majorDimension?: string; values?: unknown[][] }>(
      ctx,
      'GET',
      path`/${id}/values/${range}`,
      { query, action: `read ${range} of spreadsheet ${id}` },
    );
    const all = Array.isArray(data.values) ? data.values : [];
    const rows = all.slice(0, a.maxRows);
    const dimension = data.majorDimension || a.majorDimension;
    const out = { range: data.range ?? range, majorDimension: dimension, values: rows, count: rows.length };
    if (all.length <= a.maxRows) return out;
    const note = `Only the first ${a.maxRows} of ${all.length} ${dimension === 'COLUMNS' ? 'columns' : 'rows'} are returned: read a narrower range for the rest.`;
    return { ...out, truncated: true, note };
  },
});

export const appendRows = defineTool({
  description:
    'Append (add, insert, log) rows at the end of a table in a Google Sheets sheet: Google finds the table in `sheet` (or `range`) and writes the rows after its last row (at the bottom), starting at its first column, inserting new rows by default. Use it to add records; sheets_update_values replaces fixed cells instead. Returns the range written.',
  input: z.object({
    ...spreadsheetId,
    ...sheet,
    ...optionalRange(
      'Where to look for the table, in A1 notation (e.g. A:D); without `sheet`, a full A1 range. Omit with `sheet` for the whole sheet.',
    ),
    ...values,
    ...valueInputOption,
    insertDataOption: z
      .enum(['INSERT_ROWS', 'OVERWRITE'])
      .default('INSERT_ROWS')
      .describe('INSERT_ROWS inserts new rows for the data; OVERWRITE writes into the empty cells after the table.'),
  }),
  annotations: changes('Append rows'),
  handler: async (ctx, a) => {
    const id = spreadsheetIdOf(a.spreadsheetId);
    checkRows(a.values);
    const range = a1(a);
    const data = await api.json<{ spreadsheetId?: string; tableRange?: string; updates?: Updated }>(
      ctx,
      'POST',
      path`/${id}/values/${range}:append`,
      {
        query: { valueInputOption: a.valueInputOption, insertDataOption: a.insertDataOption },
        body: { majorDimension: 'ROWS', values: a.values },
        action: `append rows to ${range} of spreadsheet ${id}`,
      },
    );
    return {
      spreadsheetId: data.spreadsheetId || id,
      tableRange: data.tableRange ?? null,
      ...updateResult(data.updates || {}),
    };
  },
});

export const updateValues = defineTool({
  description:
    'Write (overwrite, set, fill) cell values in a range of a Google Sheets sheet, starting at the range\'s top-left cell: existing values there are replaced. Formulas (=SUM(A1:A9)) are evaluated with USER_ENTERED. null leaves a cell unchanged and "" empties it. Use sheets_append_rows to add rows after existing data, and sheets_clear_values to empty a range.',
  input: z.object({
    ...spreadsheetId,
    ...sheet,
    range: z
      .string()
      .min(1)
      .max(500)
      .describe(
        "The cells to write in A1 notation (A1, B2:D10); without `sheet`, a full A1 range such as 'Sheet1'!B2.",
      ),
    ...values,
    ...valueInputOption,
    ...majorDimension('Whether each inner array is a row (default) or a column.'),
  }),
  annotations: changes('Update (overwrite) range', { destructive: true, idempotent: true }),
  handler: async (ctx, a) => {
    const id = spreadsheetIdOf(a.spreadsheetId);
    checkRows(a.values);
    const range = a1(a);
    const data = await api.json<Updated>(ctx, 'PUT', path`/${id}/values/${range}`, {
      query: { valueInputOption: a.valueInputOption },
      body: { majorDimension: a.majorDimension, values: a.values },
      action: `write ${range} of spreadsheet ${id}`,
    });
    return { spreadsheetId: data.spreadsheetId || id, ...updateResult(data) };
  },
});

export const clearValues = defineTool({
  description:
    'Clear (empty, erase) the values of a range or a whole sheet of a Google Sheets spreadsheet; formatting stays and the sheet is not deleted. Returns the range cleared.',
  input: z.object({
    ...spreadsheetId,
    ...sheet,
    ...optionalRange(
      'Cells to clear in A1 notation; without `sheet`, a full A1 range. Omit with `sheet` to clear the whole sheet.',
    ),
  }),
  annotations: changes('Clear range', { destructive: true, idempotent: true }),
  handler: async (ctx, a) => {
    const id = spreadsheetIdOf(a.spreadsheetId);
    const range = a1(a);
    const data = await api.json<{ spreadsheetId?: string; clearedRange?: string }>(
      ctx,
      'POST',
      path`/${id}/values/${range}:clear`,
      { body: {}, action: `clear ${range} of spreadsheet ${id}` },
    );
    return { spreadsheetId: data.spreadsheetId || id, clearedRange: data.clearedRange ?? range };
  },
});
