/**
 * @module plugins/google-slides/plugin
 * Google Slides API v1 tools acting as the connected Google user: read a presentation as slim
 * text, create one, apply batchUpdate requests, and build a deck from Markdown. The tool table
 * only: handlers are in src/.
 */
import { definePlugin, googleOAuth } from 'workbench/plugin-sdk';
import { batchUpdate, createFromMarkdown, createPresentation, getPresentation } from './src/tools.js';

export default definePlugin({
  name: 'google-slides',
  version: '1.0.0',
  displayName: 'Google Slides',
  description:
    "Read and write Google Slides presentations: read a deck as text (each slide's title, text, tables and speaker notes), create a presentation, change one with Slides API batchUpdate requests, and create a whole deck from Markdown. Acts as the connected Google user; finding a presentation by name is google-drive's drive_search_files.",
  auth: googleOAuth(['https://www.googleapis.com/auth/presentations'], ['slides.googleapis.com']),
  egress: ['slides.googleapis.com'],
  tools: {
    slides_get_presentation: getPresentation,
    slides_create_presentation: createPresentation,
    slides_batch_update: batchUpdate,
    slides_create_from_markdown: createFromMarkdown,
  },
});
