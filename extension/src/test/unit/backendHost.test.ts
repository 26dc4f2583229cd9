import './vscode-stub';
import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type * as vscode from 'vscode';
import { BackendReports } from '../../backendHost';
import { MemoryLog } from './log';

describe("the backend's log in the Symposium output channel", () => {
  it('keeps each line at its own level, and a continuation line (a traceback) at the level before it', () => {
    const log = new MemoryLog();
    const reports = new BackendReports(log as unknown as vscode.LogOutputChannel);
    const lines = [
      '2026-11-25 15:00:00,001 INFO symposium.vscodelm: started',
      '2026-11-25 15:00:01,002 ERROR symposium.session: the agent exited',
      'Traceback (most recent call last):',
      '  File "x.py", line 1',
      '2026-11-25 15:00:02,003 WARNING symposium.pool: slow',
      '2026-11-25 15:00:03,004 CRITICAL symposium: out of memory',
      '2026-11-25 15:00:04,005 DEBUG symposium: detail',
      'more detail',
    ];
    lines.forEach((line) => reports.stderr(line));
    assert.deepEqual(log.lines.map((l) => l.slice(0, l.indexOf(':'))), ['info', 'error', 'error', 'error', 'warn', 'error', 'info', 'info']);
    assert.ok(log.lines.every((l, i) => l.endsWith(`[backend] ${lines[i]}`)));
  });
});
