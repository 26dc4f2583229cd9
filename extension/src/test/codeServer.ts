// What the code-server phases (runner.ts, install.ts, bare.ts) share: how code-server is started and the
// settings that keep it quiet, a page that logs its console, a free loopback port, a bounded wait for
// code-server, and stopping a process group.

import { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as path from 'node:path';
import { Browser, Page } from 'playwright-core';

/** code-server's arguments: on 127.0.0.1:`port`, no auth, no telemetry or update check, the test driver on. */
export function serveArgs(port: number, dirs: Record<string, string>): string[] {
  return [
    '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--disable-telemetry', '--disable-update-check',
    '--disable-workspace-trust', '--reconnection-grace-time', '5', '--vscode-option', 'enable-smoke-test-driver',
    '--user-data-dir', dirs['user-data'], '--extensions-dir', dirs.extensions, dirs.workspace,
  ];
}

/** Settings that keep a test window to itself: no start page, tips, telemetry, trust prompt or updates. */
export const QUIET_SETTINGS = {
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'telemetry.telemetryLevel': 'off',
  'security.workspace.trust.enabled': false,
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'update.mode': 'none',
};

export async function newPage(browser: Browser, out: string, name: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const console = fs.createWriteStream(path.join(out, `browser-${name}.log`));
  page.on('console', (m) => console.write(`[${m.type()}] ${m.text()}\n`));
  page.on('pageerror', (e) => console.write(`[pageerror] ${e.stack ?? e}\n`));
  page.on('close', () => console.end());
  return page;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** A bounded poll of code-server's health endpoint (it offers no readiness signal). */
export async function waitForServer(server: ChildProcess, url: string, out: string): Promise<void> {
  for (let attempt = 0; attempt < 150; attempt++) {
    if (server.exitCode !== null) {
      throw new Error(`code-server exited with code ${server.exitCode}; see ${out}/code-server.log`);
    }
    const ok = await new Promise<boolean>((resolve) => {
      http.get(url, (res) => resolve(res.statusCode === 200)).on('error', () => resolve(false));
    });
    if (ok) {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`code-server did not answer on ${url} within 30 s`);
}

/**
 * Stops code-server and everything in its process group: SIGTERM (so the Symposium backend stops its
 * agents), then a bounded wait for the group to empty, then SIGKILL for whatever is left.
 */
export async function stopGroup(child: ChildProcess): Promise<void> {
  const group = child.pid;
  if (group === undefined) {
    return;
  }
  const signal = (name: NodeJS.Signals | 0): boolean => {
    try {
      process.kill(-group, name);
      return true;
    } catch {
      return false; // no process left in the group
    }
  };
  signal('SIGTERM');
  for (let attempt = 0; attempt < 50 && signal(0); attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  signal('SIGKILL');
}

/** Ends a runner's code-server window: the browser closed, code-server's process group stopped, its logs
 * kept in `out/logs` (when it got that far) and its log file closed. */
export async function endWindow(browser: Browser | undefined, code: ChildProcess | undefined, userData: string, out: string, log: number): Promise<void> {
  await browser?.close();
  if (code) {
    await stopGroup(code);
  }
  try {
    fs.cpSync(path.join(userData, 'logs'), path.join(out, 'logs'), { recursive: true });
  } catch {
    // no logs: code-server did not get that far
  }
  fs.closeSync(log);
}
