/**
 * @module plugins/linear/src/resolve
 * Names an agent uses resolved to Linear ids: team keys, workflow-state names, label names,
 * users ("me", an email, a UUID or a display name) and issue identifiers ("ENG-123").
 */
import type { PluginContext } from 'workbench/plugin-sdk';
import { gql, nodes, type Connection } from './api.js';
import type { Named, Texts } from './shape.js';

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface Team {
  id: string;
  key: string;
  name?: string | null;
}

export async function resolveTeam(ctx: PluginContext, key: string): Promise<Team> {
  const data = await gql<{ teams?: Connection }>(
    ctx,
    `find team ${key}`,
    'query($key: String!) { teams(first: 2, filter: { key: { eqIgnoreCase: $key } }) { nodes { id key name } } }',
    { key },
  );
  const team = nodes<Team>(data.teams, 2)[0];
  if (!team)
    throw new Error(
      `Linear has no team with key "${key}" that you can see: linear_list_teams lists the teams and their keys.`,
    );
  return team;
}

export async function resolveState(ctx: PluginContext, team: Team, name: string): Promise<{ id: string }> {
  const data = await gql<{ workflowStates?: Connection }>(
    ctx,
    `find workflow state "${name}" of team ${team.key}`,
    'query($teamId: ID!, $name: String!) { workflowStates(first: 5, filter: { team: { id: { eq: $teamId } }, name: { eqIgnoreCase: $name } }) { nodes { id name type } } }',
    { teamId: team.id, name },
  );
  const state = nodes<{ id: string }>(data.workflowStates, 5)[0];
  if (!state)
    throw new Error(`Team ${team.key} has no workflow state named "${name}": linear_list_workflow_states lists them.`);
  return state;
}

/** The server-side label filter: these names, of this team or the workspace (no team), no label groups. */
function labelFilter(teamId: string, names: string[]) {
  return {
    and: [
      { or: names.map((n) => ({ name: { eqIgnoreCase: n } })) },
      { or: [{ team: { id: { eq: teamId } } }, { team: { null: true } }] },
      { isGroup: { eq: false } },
    ],
  };
}

/** Label names (case-insensitive) to ids: the team's labels and workspace labels (no team), never groups. */
export async function resolveLabels(ctx: PluginContext, team: Team, names: string[] | undefined): Promise<string[]> {
  if (!names || !names.length) return [];
  const data = await gql<{ issueLabels?: Connection }>(
    ctx,
    `find labels ${names.join(', ')}`,
    'query($filter: IssueLabelFilter!) { issueLabels(first: 100, filter: $filter) { nodes { id name team { id } } } }',
    { filter: labelFilter(team.id, names) },
  );
  const byName = new Map<string, string>();
  for (const l of nodes<Named & { team?: { id?: string } | null }>(data.issueLabels)) {
    if (!l || typeof l.name !== 'string') continue;
    if (l.team && l.team.id !== team.id) continue;
    const k = l.name.toLowerCase();
    if (!byName.has(k) || l.team) byName.set(k, l.id);
  }
  const missing = names.filter((n) => !byName.has(n.toLowerCase()));
  if (missing.length)
    throw new Error(
      `Team ${team.key} has no label named ${missing.map((n) => `"${n}"`).join(', ')} (labels must exist already; names are matched ignoring case).`,
    );
  return [...new Set(names.flatMap((n) => byName.get(n.toLowerCase()) ?? []))];
}

/** Linear's filter for a user by display name or full name, ignoring case. */
export const userNameFilter = (name: string) => ({
  or: [{ displayName: { eqIgnoreCase: name } }, { name: { eqIgnoreCase: name } }],
});

type Users = { users?: Connection };

/** "me", an email, a user id (UUID) or a display name → user id; "none" → null (unassigned). */
export async function resolveUser(ctx: PluginContext, who: string): Promise<string | null> {
  if (who === 'none') return null;
  if (who === 'me') {
    const data = await gql<{ viewer?: { id?: unknown } | null }>(
      ctx,
      'read your Linear user',
      'query { viewer { id } }',
      {},
    );
    if (!data.viewer || typeof data.viewer.id !== 'string')
      throw new Error('Linear did not say who you are (no viewer): try linear_whoami, or reconnect linear.');
    return data.viewer.id;
  }
  if (who.includes('@')) {
    const data = await gql<Users>(
      ctx,
      `find the Linear user ${who}`,
      'query($email: String!) { users(first: 2, filter: { email: { eqIgnoreCase: $email } }) { nodes { id } } }',
      { email: who },
    );
    const u = nodes<{ id: string }>(data.users, 2)[0];
    if (!u) throw new Error(`No Linear user in this workspace has the email ${who}.`);
    return u.id;
  }
  if (UUID.test(who)) return who;
  const data = await gql<Users>(
    ctx,
    `find the Linear user ${who}`,
    'query($filter: UserFilter!) { users(first: 3, filter: $filter) { nodes { id name displayName } } }',
    { filter: userNameFilter(who) },
  );
  const found = nodes<Named & Texts<'displayName'>>(data.users, 3).filter((u) => typeof u.id === 'string');
  if (found.length === 1) return found[0].id;
  if (!found.length)
    throw new Error(
      `No Linear user in this workspace has the display name or name "${who}": give "me", an email, a user id (a UUID; linear_whoami shows yours) or an exact display name.`,
    );
  throw new Error(
    `More than one Linear user is called "${who}" (${found.map((u) => u.displayName || u.name).join(', ')}): give their email instead.`,
  );
}

/** An issue identifier or UUID → the issue's id and team. */
export async function resolveIssue(
  ctx: PluginContext,
  ref: string,
  action: string,
): Promise<{ id: string; identifier?: string | null; team: Team }> {
  const data = await gql<{ issue?: { id: string; identifier?: string | null; team: Team } | null }>(
    ctx,
    action,
    'query($id: String!) { issue(id: $id) { id identifier team { id key } } }',
    { id: ref },
  );
  if (!data.issue) throw new Error(`Linear found no issue ${ref}.`);
  return data.issue;
}
