/**
 * @module test/host/cli/server-record.unit.test
 * Which records in a data dir `workbench plugins reload` signals (host/cli/server-record.ts): only
 * those of a process still running that is the one that wrote it. A record whose pid is gone, or
 * now belongs to a process started later, is skipped and deleted: the command must never send
 * SIGHUP (whose default action ends a process) to a stranger.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, it } from 'node:test';
import { processStart, recordFile, runningServers, writeRecord } from '../../../host/cli/server-record.js';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'workbench-records-'));
after(() => fs.rmSync(dataDir, { recursive: true, force: true }));

it(
  'keeps the records of servers still running, and deletes those of a pid gone or reused',
  { skip: processStart(process.pid) === undefined && 'needs /proc' },
  () => {
    const gone = spawnSync(process.execPath, ['-e', '0']).pid;
    const start = processStart(process.pid);
    const base = { url: 'http://127.0.0.1:1', startedAt: new Date().toISOString() };
    writeRecord(dataDir, { ...base, pid: process.pid, ...(start !== undefined ? { processStart: start } : {}) });
    writeRecord(dataDir, { ...base, pid: gone, processStart: '1' });
    const reused = process.ppid; // alive, but not the process that "wrote" this record
    writeRecord(dataDir, { ...base, pid: reused, processStart: 'not-its-start' });
    assert.deepEqual(
      runningServers(dataDir).map((r) => r.pid),
      [process.pid],
    );
    assert.equal(fs.existsSync(recordFile(dataDir, gone)), false, 'the record of a pid gone is deleted');
    assert.equal(fs.existsSync(recordFile(dataDir, reused)), false, "so is the record of a pid now another process's");
    assert.equal((fs.statSync(recordFile(dataDir, process.pid)).mode & 0o777).toString(8), '600');
  },
);
