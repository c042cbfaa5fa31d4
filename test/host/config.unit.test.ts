/**
 * @module test/host/config.unit.test
 * The environment the server reads (readConfig): each variable's bad values are refused with
 * GW_ERR_CONFIG_INVALID naming the variable, and the values it takes are read as documented.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { readConfig } from '../../host/config.js';
import { isGatewayError } from '../../host/errors.js';

const refused = (env: Record<string, string>, message: RegExp): void => {
  assert.throws(
    () => readConfig(env),
    (err: unknown) => isGatewayError(err) && err.code === 'GW_ERR_CONFIG_INVALID' && message.test(err.message),
  );
};

describe('readConfig', () => {
  it('reads the defaults', () => {
    const c = readConfig({});
    assert.equal(c.port, 3000);
    assert.equal(c.host, '127.0.0.1');
    assert.equal(c.databaseUrl, undefined);
    assert.equal(c.dataDir, path.resolve('./data'));
    assert.equal(c.publicUrl, 'http://127.0.0.1:3000');
  });

  it('takes a PostgreSQL URL in either spelling and case, and SQLite paths with or without sqlite:', () => {
    for (const url of [
      'postgres://wb@127.0.0.1/wb',
      'postgresql://wb@127.0.0.1/wb',
      'POSTGRES://wb@127.0.0.1/wb',
      'sqlite:///tmp/wb.db',
      'sqlite:wb.db',
      './wb.db',
      '/var/lib/wb/wb.db',
      'C:\\wb\\wb.db',
    ])
      assert.equal(readConfig({ DATABASE_URL: url }).databaseUrl, url);
  });

  it('refuses a DATABASE_URL of another scheme, naming only the scheme', () => {
    refused({ DATABASE_URL: 'postgress://wb:s3cret@127.0.0.1/wb' }, /^DATABASE_URL must be .*; got a "postgress:" URL/);
    refused({ DATABASE_URL: 'mysql://root@127.0.0.1/wb' }, /got a "mysql:" URL/);
    refused({ DATABASE_URL: ' postgres://wb@127.0.0.1/wb' }, /got a value with spaces around it/);
    refused({ DATABASE_URL: 'postgres:/127.0.0.1/wb' }, /got "postgres:" without "\/\/"/);
    assert.throws(
      () => readConfig({ DATABASE_URL: 'postgress://wb:s3cret@127.0.0.1/wb' }),
      (err: unknown) => !String((err as Error).message).includes('s3cret'),
    );
  });

  it('refuses a bad PORT, LOG_LEVEL or WORKBENCH_PUBLIC_URL, naming it', () => {
    refused({ PORT: '80a' }, /^PORT must be a number/);
    refused({ PORT: '70000' }, /^PORT must be a number/);
    refused({ LOG_LEVEL: 'verbose' }, /^LOG_LEVEL must be one of/);
    refused({ WORKBENCH_PUBLIC_URL: 'ftp://example.com' }, /^WORKBENCH_PUBLIC_URL must be an http\(s\) URL/);
  });

  it('reads WORKBENCH_JOTS_URL as an origin on another host, and refuses anything else', () => {
    assert.equal(readConfig({}).jotsUrl, undefined);
    const env = { WORKBENCH_PUBLIC_URL: 'https://workbench.example.com' };
    assert.equal(
      readConfig({ ...env, WORKBENCH_JOTS_URL: 'https://jots.example.com/' }).jotsUrl,
      'https://jots.example.com',
    );
    assert.equal(readConfig({ ...env, WORKBENCH_JOTS_URL: 'http://jots.test:8080' }).jotsUrl, 'http://jots.test:8080');
    refused({ ...env, WORKBENCH_JOTS_URL: 'jots.example.com' }, /^WORKBENCH_JOTS_URL must be an http\(s\) URL/);
    refused({ ...env, WORKBENCH_JOTS_URL: 'ftp://jots.example.com' }, /^WORKBENCH_JOTS_URL must be an http\(s\) URL/);
    refused({ ...env, WORKBENCH_JOTS_URL: 'https://jots.example.com/sites' }, /must be an origin only/);
    refused({ ...env, WORKBENCH_JOTS_URL: 'https://u:p@jots.example.com' }, /must be an origin only/);
    refused({ ...env, WORKBENCH_JOTS_URL: 'https://jots.example.com/?a=1' }, /must be an origin only/);
    // the same host name on another port would still be sent the portal's cookies
    refused(
      { ...env, WORKBENCH_JOTS_URL: 'https://workbench.example.com:8443' },
      /another host than WORKBENCH_PUBLIC_URL/,
    );
  });
});
