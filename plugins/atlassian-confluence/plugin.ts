/**
 * @module plugins/atlassian-confluence/plugin
 * Confluence Cloud tools acting as the connected Atlassian user (OAuth 2.0 3LO) on one site (see
 * README.md). The tool table, in the order agents see it; the tools live in src/ by area.
 */
import { definePlugin } from 'workbench/plugin-sdk';
import { addComment, addLabels, listAttachments, listComments } from './src/page-items.js';
import { createPage, deletePage, getPage, getPageChildren, updatePage } from './src/pages.js';
import { search } from './src/search.js';
import { getSpace, listPages, listSpaces } from './src/spaces.js';

export default definePlugin({
  name: 'atlassian-confluence',
  version: '1.0.0',
  displayName: 'Confluence (Atlassian Cloud)',
  description:
    'Search, read, create, edit and delete Confluence Cloud wiki pages and documentation: CQL search, spaces, page trees, page bodies as readable text, footer comments, attachments and labels. Acts as the connected Atlassian user on one Confluence Cloud site (the site named in the connection, or the first one the user granted).',
  auth: {
    type: 'oauth2',
    authorizationUrl: 'https://auth.atlassian.com/authorize',
    authorizationParams: { audience: 'api.atlassian.com', prompt: 'consent' },
    tokenUrl: 'https://auth.atlassian.com/oauth/token',
    scopes: [
      'read:space:confluence',
      'read:page:confluence',
      'write:page:confluence',
      'delete:page:confluence',
      'read:comment:confluence',
      'write:comment:confluence',
      'read:attachment:confluence',
      'read:label:confluence',
      'write:label:confluence',
      'read:content-details:confluence',
      'search:confluence',
      'offline_access',
    ],
    inject: { header: 'authorization', format: 'Bearer {token}' },
  },
  egress: ['api.atlassian.com'],
  tools: {
    confluence_search: search,
    confluence_list_spaces: listSpaces,
    confluence_get_space: getSpace,
    confluence_list_pages: listPages,
    confluence_get_page: getPage,
    confluence_get_page_children: getPageChildren,
    confluence_create_page: createPage,
    confluence_update_page: updatePage,
    confluence_delete_page: deletePage,
    confluence_add_comment: addComment,
    confluence_list_comments: listComments,
    confluence_list_attachments: listAttachments,
    confluence_add_labels: addLabels,
  },
});
