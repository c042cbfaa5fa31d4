/**
 * @module test/host/discovery/weak-match.unit.test
 * The weak-match decision of search_tools on the real catalog (plugins/<name>/manifest.json read as
 * JSON): long, correctly answered requests get no warning although they score low; requests no tool
 * here serves get it; what `fit` reports; and the rates over the labelled queries
 * (test/fixtures/discovery/queries-*.json, negatives included).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { toSearchEntry } from '../../../host/discovery/catalog-tool.js';
import { evaluateHint, loadCatalogFromManifests, loadLabelledQueries } from '../../../bench/search-evaluation.js';
import { createSearchIndex } from '../../../host/discovery/search-index.js';
import { isWeakMatch, WEAK_MATCH, weakMatchAdvice } from '../../../host/discovery/weak-match.js';
import { PACKAGE_ROOT } from '../../../host/paths.js';

const catalog = loadCatalogFromManifests(PACKAGE_ROOT);
const index = createSearchIndex(catalog.map(toSearchEntry));

/** The most false alarms and the fewest detections the labelled queries may show. */
const MAX_FALSE_ALARMS = 0.05;
const MIN_DETECTION = 0.65;

describe('weak match on the real catalog', () => {
  it('stays silent on long requests whose first result is right, though they score low', () => {
    for (const [query, tool] of [
      ['leave a comment on the GitHub issue saying I am working on it', 'github_add_issue_comment'],
      ['which Slack account and workspace am I connected as', 'slack_whoami'],
      ['show me what is inside the src folder of the repository', 'github_get_file_contents'],
      ['open a new bug in Jira for the login page crash', 'jira_create_issue'],
      ['query New Relic telemetry for the 95th percentile response time', 'newrelic_run_nrql'],
      ['overwrite cells B2:C5 in the spreadsheet with new numbers', 'sheets_update_values'],
    ] as const) {
      const result = index.query(query);
      assert.equal(result.hits[0]?.entry.name, tool, query);
      // these scored below the 0.25 a score-only rule warned at
      assert.ok((result.hits[0]?.score ?? 1) < 0.25, `${query}: ${result.hits[0]?.score}`);
      assert.equal(isWeakMatch(result.hits[0]), false, `${query}: ${JSON.stringify(result.fit)}`);
    }
  });

  it('warns on requests no tool here serves, with or without words that match nothing', () => {
    for (const query of [
      'turn off the living room lights',
      'will it rain this afternoon',
      'what is the current price of bitcoin',
      'log a call with the customer in the CRM',
      'start a 25 minute timer',
      'show the stack trace of the Sentry issue',
      'set my Slack status to out of office',
      'book a flight from Berlin to Lisbon next Friday',
    ]) {
      const result = index.query(query);
      assert.ok(result.hits.length > 0, query);
      assert.equal(
        isWeakMatch(result.hits[0]),
        true,
        `${query}: ${result.hits[0]?.entry.name} ${result.hits[0]?.score} ${JSON.stringify(result.fit)}`,
      );
    }
  });

  it('reports the share of the query the best hit matches and the words it leaves out', () => {
    const pagerduty = index.query('open a pagerduty incident for the outage');
    assert.ok(pagerduty.fit);
    assert.ok(pagerduty.fit.missing.includes('pagerduty'), JSON.stringify(pagerduty.fit));
    assert.ok(pagerduty.fit.coverage > 0 && pagerduty.fit.coverage < 1);
    const whole = index.query('list slack channels');
    assert.deepEqual(whole.fit, { coverage: 1, missing: [] });
    // a number is a value, not a word asked for, and nothing matched answers no fit at all
    assert.equal(index.query('comment on issue 12').fit?.missing.includes('12'), false);
    assert.equal(index.query('').fit, undefined);
    assert.equal(isWeakMatch(index.query('').hits[0]), false);
  });

  it('is weak below the score limit, or at and below the coverage limit', () => {
    assert.equal(isWeakMatch({ score: 0.9, fit: { coverage: WEAK_MATCH.coverage, missing: ['x'] } }), true);
    assert.equal(isWeakMatch({ score: 0.9, fit: { coverage: WEAK_MATCH.coverage + 0.001, missing: ['x'] } }), false);
    assert.equal(isWeakMatch({ score: WEAK_MATCH.score - 0.001, fit: { coverage: 1, missing: [] } }), true);
    assert.equal(isWeakMatch({ score: WEAK_MATCH.score, fit: { coverage: 1, missing: [] } }), false);
    assert.equal(isWeakMatch(undefined), false);
  });

  it('tells the agent which words the best match leaves out and what to do', () => {
    const advice = weakMatchAdvice('slack_set_channel_topic', { missing: ['thermostat', 'degrees'] });
    assert.match(
      advice,
      /^No tool may fit: the first result, slack_set_channel_topic, leaves out the words "thermostat", "degrees" of your request\./,
    );
    assert.match(advice, /may not exist here: try other words once, then tell the user/);
    assert.match(weakMatchAdvice('x_y', { missing: [] }), /x_y, matches your words only loosely\./);
  });

  it(`over the labelled queries: at most ${MAX_FALSE_ALARMS * 100}% false alarms, at least ${MIN_DETECTION * 100}% of negatives warned`, (t) => {
    const queries = loadLabelledQueries(join(PACKAGE_ROOT, 'test', 'fixtures', 'discovery'));
    const report = evaluateHint(index, queries, new Set(catalog.map((tool) => tool.name)));
    const line =
      `weak-match hint: first result right ${report.rightFirst.fired}/${report.rightFirst.queries}, ` +
      `first result wrong ${report.wrongFirst.fired}/${report.wrongFirst.queries}, negatives ${report.negatives.fired}/${report.negatives.queries}`;
    t.diagnostic(line);
    assert.ok(report.negatives.queries >= 80, `only ${report.negatives.queries} negative queries`);
    const alarms = report.rightFirst.outcomes
      .filter((o) => o.fired)
      .map((o) => `"${o.query.query}" → ${o.top} ${o.score}, coverage ${o.coverage}`);
    assert.ok(report.rightFirst.rate <= MAX_FALSE_ALARMS, `${line}; false alarms:\n  ${alarms.join('\n  ')}`);
    const silent = report.negatives.outcomes
      .filter((o) => !o.fired)
      .map((o) => `"${o.query.query}" → ${o.top} ${o.score}, coverage ${o.coverage}`);
    assert.ok(report.negatives.rate >= MIN_DETECTION, `${line}; negatives without the hint:\n  ${silent.join('\n  ')}`);
  });
});
