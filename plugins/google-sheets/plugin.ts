/**
 * @module plugins/google-sheets/plugin
 * Google Sheets API v4 tools acting as the connected Google user (OAuth 2.0): a spreadsheet's
 * sheets, values read, appended, overwritten and cleared in A1 notation, new spreadsheets and
 * sheets. The tool table; the handlers live in src/ by area.
 */
import { definePlugin, googleOAuth } from 'workbench/plugin-sdk';
import { addSheet, createSpreadsheet, getSpreadsheet } from './src/spreadsheets.js';
import { appendRows, clearValues, readValues, updateValues } from './src/values.js';

export default definePlugin({
  name: 'google-sheets',
  version: '1.0.0',
  displayName: 'Google Sheets',
  description:
    "Read and write Google Sheets spreadsheets: list a spreadsheet's sheets, read a range's values in A1 notation, append rows, overwrite or clear a range, create spreadsheets and add sheets (tabs). Acts as the connected Google user.",
  auth: googleOAuth(['https://www.googleapis.com/auth/spreadsheets'], ['sheets.googleapis.com']),
  egress: ['sheets.googleapis.com'],
  tools: {
    sheets_get_spreadsheet: getSpreadsheet,
    sheets_read_values: readValues,
    sheets_append_rows: appendRows,
    sheets_update_values: updateValues,
    sheets_clear_values: clearValues,
    sheets_create_spreadsheet: createSpreadsheet,
    sheets_add_sheet: addSheet,
  },
});
