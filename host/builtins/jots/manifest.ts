/**
 * @module host/builtins/jots/manifest
 * The jots built-in's manifest: six tools an agent uses to publish small static sites (an HTML
 * report, a chart, a page of notes) and hand a person the link. The descriptions are what a model
 * reads when it finds the tools: they say what a site is, how a person opens it, and the limits.
 */
import type { PluginManifest } from '../../../contracts/manifest.js';
import { MAX_PATH_CHARS, MAX_PATH_DEPTH } from './site-paths.js';

const ID = {
  type: 'string',
  description: 'the site id, as jots_deploy or jots_list returned it',
  minLength: 1,
  maxLength: 64,
};

const FILES = {
  type: 'array',
  description:
    'the files: each a path relative to the site root ("index.html", "css/site.css") and its content, as UTF-8 text or base64 (images, fonts)',
  maxItems: 10_000,
  items: {
    type: 'object',
    properties: {
      path: {
        type: 'string',
        description: `relative to the site root; "/"-separated, at most ${MAX_PATH_CHARS} characters and ${MAX_PATH_DEPTH} levels, no ".."`,
      },
      content: { type: 'string' },
      encoding: { type: 'string', enum: ['utf8', 'base64'], default: 'utf8' },
    },
    required: ['path', 'content'],
    additionalProperties: false,
  },
};

const TITLE = { type: 'string', maxLength: 200, description: 'a title, shown in jots_list' };

export const JOTS_MANIFEST: PluginManifest = {
  name: 'jots',
  version: '1.0.0',
  displayName: 'Jots',
  description:
    'Publish small static websites (HTML, CSS, JavaScript, images) from files you write, served by the gateway: a report, a chart or a page of notes to show a person. Private to you unless shared by link.',
  auth: { type: 'none' },
  egress: [],
  tools: [
    {
      name: 'jots_deploy',
      description:
        'Publish a new static site from files and get its URL. An index.html at the root is required (the URL serves it); links between files are relative. The site is private: its owner opens `url` in a browser signed in to the Workbench portal (or with the API key header). Pass share: true to also get a `shareUrl` anyone can open without signing in. Pages run in a sandbox: scripts work, but cannot make network requests; put data in the files. Quotas per user apply (sites, files, bytes).',
      inputSchema: {
        type: 'object',
        properties: {
          title: TITLE,
          files: { ...FILES, minItems: 1 },
          share: { type: 'boolean', default: false, description: 'also create a share link (shareUrl)' },
        },
        required: ['files'],
        additionalProperties: false,
      },
      annotations: { title: 'Publish a site', readOnlyHint: false, destructiveHint: false, openWorldHint: false },
    },
    {
      name: 'jots_update',
      description:
        "Change one of your sites in place: `files` are written over the site's (a path sent replaces that file; files not named stay), then `delete` removes paths. All or nothing: a refused update changes nothing. The URL and share link stay the same.",
      inputSchema: {
        type: 'object',
        properties: {
          id: ID,
          title: TITLE,
          files: FILES,
          delete: {
            type: 'array',
            description: 'paths of files to remove',
            maxItems: 10_000,
            items: { type: 'string' },
          },
        },
        required: ['id'],
        additionalProperties: false,
      },
      annotations: { title: 'Update a site', readOnlyHint: false, destructiveHint: true, openWorldHint: false },
    },
    {
      name: 'jots_list_files',
      description: "List one of your sites' files: path, size, content type, SHA-256 and when each was written.",
      inputSchema: { type: 'object', properties: { id: ID }, required: ['id'], additionalProperties: false },
      annotations: { title: 'List a site’s files', readOnlyHint: true, openWorldHint: false },
    },
    {
      name: 'jots_list',
      description: 'List your sites (id, title, URL, whether shared, size) and how much of your quota they use.',
      inputSchema: { type: 'object', properties: {}, additionalProperties: false },
      annotations: { title: 'List your sites', readOnlyHint: true, openWorldHint: false },
    },
    {
      name: 'jots_delete',
      description: 'Delete one of your sites and all its files; its URL and share link stop working at once.',
      inputSchema: { type: 'object', properties: { id: ID }, required: ['id'], additionalProperties: false },
      annotations: { title: 'Delete a site', readOnlyHint: false, destructiveHint: true, openWorldHint: false },
    },
    {
      name: 'jots_share',
      description:
        'Share one of your sites by link, or stop sharing it. enabled: true returns a new `shareUrl` anyone holding it can open without signing in (an earlier share link stops working); enabled: false revokes the link at once.',
      inputSchema: {
        type: 'object',
        properties: { id: ID, enabled: { type: 'boolean', description: 'true: a new share link; false: revoke it' } },
        required: ['id', 'enabled'],
        additionalProperties: false,
      },
      annotations: { title: 'Share a site', readOnlyHint: false, destructiveHint: false, openWorldHint: false },
    },
  ],
};
