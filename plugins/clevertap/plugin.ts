/**
 * @module plugins/clevertap/plugin
 * CleverTap analytics (REST API v1) across several projects in one connection: each project is a
 * CleverTap account with its own account id, passcode and region. The connection holds them as a
 * records field; the plugin reads the projects without their passcodes (ctx.config) and names the
 * project of each request in `X-CleverTap-Account-Id`, and the gateway adds that project's
 * passcode. Read-only tools; the table only: handlers are in src/.
 */
import { definePlugin } from 'workbench/plugin-sdk';
import { HOSTS, REGIONS } from './src/api.js';
import { getCampaignReport, getMessageReport, listCampaigns } from './src/campaigns.js';
import {
  getDailyActiveUsers,
  getEventCount,
  getEventTrends,
  getProfileCount,
  getRealTimeCounts,
  getTopPropertyCounts,
  getUninstallReport,
} from './src/counts.js';
import { listProjects } from './src/projects.js';
import { getEvents, getProfile, getProfilesByEvent } from './src/records.js';
import { request } from './src/request.js';

export default definePlugin({
  name: 'clevertap',
  version: '1.0.0',
  displayName: 'CleverTap',
  description:
    "Read CleverTap analytics across several projects: events and their counts and trends, daily active users, uninstalls, top property values, real-time active users, user profiles (by identity, email or event) and profile counts, campaigns with their reports, and message reports; plus a read-only request to the documented read endpoints. Uses each project's account id and passcode, in its region.",
  auth: {
    type: 'apikey',
    fields: [
      {
        name: 'projects',
        label: 'Projects',
        description: `A JSON list of your CleverTap projects, one object each: [{"name": "Production", "accountId": "W8R-…", "passcode": "…", "region": "in1"}]. name is optional; region is one of ${REGIONS.join(', ')} (the host of your dashboard's API, e.g. in1 for in1.api.clevertap.com).`,
        secret: true,
        records: {
          key: 'accountId',
          fields: ['name', 'accountId', 'passcode', 'region'],
          required: ['accountId', 'passcode', 'region'],
          secret: ['passcode'],
          max: 20,
        },
      },
      {
        name: 'defaultProject',
        label: 'Default project',
        description: 'The name or account id of the project tools use when called without one; default the first.',
        secret: false,
        required: false,
      },
    ],
    inject: { header: 'X-CleverTap-Passcode', format: '{projects.passcode}', recordHeader: 'X-CleverTap-Account-Id' },
    instructions:
      'For each project, open CleverTap > Settings > Project (or Passcode) to find its Account ID and a Passcode (create one with read access), and note the region your dashboard uses. Enter them as a JSON list; add as many projects as you want to query (20 at most).',
  },
  egress: HOSTS,
  tools: {
    clevertap_list_projects: listProjects,
    clevertap_get_events: getEvents,
    clevertap_get_event_count: getEventCount,
    clevertap_get_event_trends: getEventTrends,
    clevertap_get_profile: getProfile,
    clevertap_get_profiles_by_event: getProfilesByEvent,
    clevertap_get_profile_count: getProfileCount,
    clevertap_list_campaigns: listCampaigns,
    clevertap_get_campaign_report: getCampaignReport,
    clevertap_get_message_report: getMessageReport,
    clevertap_get_top_property_counts: getTopPropertyCounts,
    clevertap_get_daily_active_users: getDailyActiveUsers,
    clevertap_get_uninstall_report: getUninstallReport,
    clevertap_get_real_time_counts: getRealTimeCounts,
    clevertap_request: request,
  },
});
