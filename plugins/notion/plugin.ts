/**
 * @module plugins/notion/plugin
 * Notion REST API tools acting through the connected Notion public integration (OAuth 2.0). Every
 * request goes to https://api.notion.com/v1 with the `Notion-Version` header (src/api.ts); lists
 * page with `start_cursor` / `next_cursor`, handed back as `next`. Page content is read from the
 * block tree and shown as markdown-ish text (src/content.ts); text given to the write tools is
 * turned into blocks (src/blocks.ts). Only pages and databases shared with the integration can be
 * reached.
 */
import { definePlugin } from 'workbench/plugin-sdk';
import { addComment, listComments } from './src/comments.js';
import { queryDatabase } from './src/databases.js';
import { appendContent, createPage, getPage, search, updatePage } from './src/pages.js';

export default definePlugin({
  name: 'notion',
  version: '1.0.0',
  displayName: 'Notion',
  description:
    'Search, read, create and update Notion pages and database rows, append content, query databases and comment on pages. Acts through the connected Notion public integration, on the pages the user shared with it.',
  auth: {
    type: 'oauth2',
    authorizationUrl: 'https://api.notion.com/v1/oauth/authorize',
    tokenUrl: 'https://api.notion.com/v1/oauth/token',
    // Notion has no scopes: the capabilities are set in the integration's settings
    scopes: [],
    authorizationParams: { owner: 'user' },
    clientAuth: 'basic',
    inject: { hosts: ['api.notion.com'], header: 'authorization', format: 'Bearer {token}' },
  },
  egress: ['api.notion.com'],
  tools: {
    notion_search: search,
    notion_get_page: getPage,
    notion_create_page: createPage,
    notion_append_content: appendContent,
    notion_update_page: updatePage,
    notion_query_database: queryDatabase,
    notion_add_comment: addComment,
    notion_list_comments: listComments,
  },
});
