/**
 * @module plugins/google-drive/plugin
 * Google Drive API v3 tools acting as the connected Google user (OAuth 2.0): search, read files
 * as text, create folders and text files or Google Docs, upload a file from a URL, rename, move,
 * share and trash. The tool table; the handlers live in src/ by area. The upload from a URL reaches
 * any public host (egressAnyPublicHost), which never receives the Google token.
 */
import { definePlugin, googleOAuth } from 'workbench/plugin-sdk';
import { getFile, readFile } from './src/read.js';
import { searchFiles } from './src/search.js';
import { listPermissions, shareFile } from './src/sharing.js';
import { uploadFromUrl } from './src/upload-url.js';
import { createFile, createFolder, moveOrRenameFile, trashFile } from './src/write.js';

export default definePlugin({
  name: 'google-drive',
  version: '1.0.0',
  displayName: 'Google Drive',
  description:
    'Find, read and organise files in Google Drive and shared drives: search by name, text, type, folder or date, read Google Docs, Sheets, Slides and text files as text, create folders and text files or Google Docs, upload a file from a public URL, rename and move files, share them and see who has access, and move them to the trash. Acts as the connected Google user.',
  auth: googleOAuth(['https://www.googleapis.com/auth/drive'], ['www.googleapis.com']),
  egress: ['www.googleapis.com'],
  egressAnyPublicHost: true,
  tools: {
    drive_search_files: searchFiles,
    drive_get_file: getFile,
    drive_read_file: readFile,
    drive_create_folder: createFolder,
    drive_create_file: createFile,
    drive_upload_from_url: uploadFromUrl,
    drive_move_or_rename_file: moveOrRenameFile,
    drive_share_file: shareFile,
    drive_list_permissions: listPermissions,
    drive_trash_file: trashFile,
  },
});
