/**
 * @module plugins/google-sheets/src/spreadsheets
 * Spreadsheets and their sheets (tabs): read a spreadsheet's structure, create a spreadsheet, add
 * a sheet.
 */
import { changes, defineTool, path, reads, z } from 'workbench/plugin-sdk';
import { api, spreadsheetId, spreadsheetIdOf } from './api.js';

const SPREADSHEET_FIELDS =
  'spreadsheetId,spreadsheetUrl,properties(title,locale,timeZone),' +
  'sheets(properties(sheetId,title,index,sheetType,hidden,gridProperties(rowCount,columnCount,frozenRowCount,frozenColumnCount))),namedRanges(name)';
const CREATED_FIELDS =
  'spreadsheetId,spreadsheetUrl,properties(title),sheets(properties(sheetId,title,index,sheetType,gridProperties(rowCount,columnCount)))';

interface SheetProperties {
  sheetId?: number;
  title?: string;
  index?: number;
  sheetType?: string;
  hidden?: boolean;
  gridProperties?: { rowCount?: number; columnCount?: number; frozenRowCount?: number; frozenColumnCount?: number };
}
interface Spreadsheet {
  spreadsheetId?: string;
  spreadsheetUrl?: string;
  properties?: { title?: string; locale?: string; timeZone?: string };
  sheets?: Array<{ properties?: SheetProperties }>;
  namedRanges?: Array<{ name?: string }>;
}

function slimSheet(s: { properties?: SheetProperties } | null | undefined) {
  const p = s?.properties || {};
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
}
const sheetsOf = (s: Spreadsheet) => (Array.isArray(s.sheets) ? s.sheets.map(slimSheet) : []);

export const getSpreadsheet = defineTool({
  description:
    "Get a Google Sheets spreadsheet's structure: its title, link, locale, time zone, named ranges, and every sheet (tab) with its title, numeric sheetId, position, grid size (rows × columns) and frozen rows. Use it first to learn the sheet titles before reading or writing values with sheets_read_values, sheets_append_rows or sheets_update_values.",
  input: z.object(spreadsheetId),
  annotations: reads('Get spreadsheet sheets'),
  handler: async (ctx, a) => {
    const id = spreadsheetIdOf(a.spreadsheetId);
    const s = await api.json<Spreadsheet>(ctx, 'GET', path`/${id}`, {
      query: { fields: SPREADSHEET_FIELDS },
      action: `read spreadsheet ${id}`,
    });
    const p = s.properties || {};
    return {
      spreadsheetId: s.spreadsheetId || id,
      title: p.title ?? null,
      url: s.spreadsheetUrl ?? null,
      locale: p.locale ?? null,
      timeZone: p.timeZone ?? null,
      sheets: sheetsOf(s),
      namedRanges: Array.isArray(s.namedRanges) ? s.namedRanges.map((n) => n.name).filter(Boolean) : [],
    };
  },
});

export const createSpreadsheet = defineTool({
  description:
    "Create a new Google Sheets spreadsheet (a new workbook in the user's Drive) with a title and, optionally, named sheets (tabs). Returns its id, link and sheets; then write data with sheets_update_values or sheets_append_rows.",
  input: z.object({
    title: z.string().min(1).max(255).describe('Spreadsheet title.'),
    sheets: z
      .array(z.string().min(1).max(100))
      .min(1)
      .max(50)
      .optional()
      .describe('Titles of the sheets (tabs) to create, in order; omit for one sheet named by Google (Sheet1).'),
    locale: z
      .string()
      .regex(/^[a-z]{2,3}(_[A-Z]{2})?$/)
      .optional()
      .describe('Locale for number and date formats, e.g. en_US or de_DE.'),
    // the pattern as JSON Schema text (.meta): a RegExp's source would publish "/" as "\/"
    timeZone: z
      .string()
      .meta({ pattern: '^[A-Za-z_+-]{1,30}(/[A-Za-z0-9_+-]{1,30}){0,2}$' })
      .optional()
      .describe('Time zone, e.g. Europe/Paris.'),
  }),
  annotations: changes('Create spreadsheet'),
  handler: async (ctx, a) => {
    const titles = a.sheets || [];
    const seen = new Set<string>();
    for (const t of titles) {
      const k = t.toLowerCase();
      if (seen.has(k))
        throw new Error(`Sheet title "${t}" is given twice: sheet titles must be unique (ignoring case).`);
      seen.add(k);
    }
    const body = {
      properties: { title: a.title, locale: a.locale || undefined, timeZone: a.timeZone || undefined },
      sheets: titles.length ? titles.map((title) => ({ properties: { title } })) : undefined,
    };
    const s = await api.json<Spreadsheet>(ctx, 'POST', '', {
      query: { fields: CREATED_FIELDS },
      body,
      action: `create the spreadsheet "${a.title}"`,
    });
    return {
      spreadsheetId: s.spreadsheetId,
      title: s.properties?.title ?? a.title,
      url: s.spreadsheetUrl ?? null,
      sheets: sheetsOf(s),
    };
  },
});

export const addSheet = defineTool({
  description:
    'Add a new sheet (tab) to an existing Google Sheets spreadsheet, optionally at a position and with a grid size. Returns its sheetId and title. Use sheets_create_spreadsheet for a new spreadsheet.',
  input: z.object({
    ...spreadsheetId,
    title: z.string().min(1).max(100).describe('Title of the new sheet (unique in the spreadsheet).'),
    index: z.int().min(0).max(1000).optional().describe('Position among the tabs (0 = first); omit for last.'),
    rows: z.int().min(1).max(100000).optional().describe('Number of rows (default 1000).'),
    columns: z.int().min(1).max(18278).optional().describe('Number of columns (default 26).'),
  }),
  annotations: changes('Add sheet (tab)'),
  handler: async (ctx, a) => {
    const id = spreadsheetIdOf(a.spreadsheetId);
    const grid =
      a.rows !== undefined || a.columns !== undefined
        ? { gridProperties: { rowCount: a.rows, columnCount: a.columns } }
        : {};
    const properties: SheetProperties = { title: a.title, index: a.index, ...grid };
    const data = await api.json<{
      spreadsheetId?: string;
      replies?: Array<{ addSheet?: { properties?: SheetProperties } }>;
    }>(ctx, 'POST', path`/${id}:batchUpdate`, {
      body: { requests: [{ addSheet: { properties } }] },
      action: `add the sheet "${a.title}" to spreadsheet ${id}`,
    });
    const reply = Array.isArray(data.replies) ? data.replies[0]?.addSheet : undefined;
    return { spreadsheetId: data.spreadsheetId || id, ...slimSheet(reply || { properties }) };
  },
});
