// The install phase of the integration tests: Symposium as a new user gets it. The built vsix is
// installed into a clean code-server profile (no settings, no `symposium` on PATH, Python on PATH);
// the tests in src/test/installed/ chat with Eliza (the one-time setup builds the private venv), then
// add an agent from a test catalogue served on 127.0.0.1 (the echo agent, packed with `npm pack`) and
// chat with it. This runner plays the user's part in the UI: it picks the agent in Add Agent's list,
// watches the notifications, and reads Manage Agents.
//
//   node out/test/install.js --vsix FILE
//
// Environment: CODE_SERVER (required), CHROMIUM (default /usr/bin/chromium), WHEELHOUSE_CACHE (where
// the backend's dependencies are downloaded as wheels, once per Python and lock: the private venv is
// then installed from that folder with no index, offline and quick, its hashes checked as anywhere).
// Logs go to out/install/.

import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Browser, chromium, Page } from 'playwright-core';
import { endWindow, freePort, newPage, serveArgs, waitForServer } from './codeServer';
import * as crypto from 'node:crypto';
import { findPython, run } from '../setup';
import { FileServer, packEchoAgent } from './fixtures';
import { notification, openNotifications, pickInAddAgent } from './notifications';

const EXTENSION = path.resolve(__dirname, '../..');
const OUT = path.join(EXTENSION, 'out', 'install');
const CODE_SERVER = process.env.CODE_SERVER ?? '';
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const TIMEOUT_MS = 8 * 60_000;

interface Check {
  name: string;
  ok: boolean;
  detail?: string;
}

async function main(): Promise<number> {
  const vsixArg = process.argv.indexOf('--vsix');
  const vsix = vsixArg > 0 ? path.resolve(process.argv[vsixArg + 1]) : '';
  if (!CODE_SERVER || !vsix || !fs.existsSync(vsix)) {
    throw new Error('usage: CODE_SERVER=... node out/test/install.js --vsix FILE');
  }
  fs.rmSync(OUT, { recursive: true, force: true });
  fs.mkdirSync(OUT, { recursive: true });
  const started = Date.now();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'symposium-install-'));
  const dirs = Object.fromEntries(
    ['user-data', 'extensions', 'config', 'data', 'cache', 'state', 'tmp', 'workspace', 'serve'].map((d) => [d, path.join(root, d)]),
  );
  Object.values(dirs).forEach((d) => fs.mkdirSync(d, { recursive: true }));
  fs.writeFileSync(path.join(dirs.workspace, 'README.md'), '# A workspace for the Symposium install tests\n');
  const report = path.join(OUT, 'report.txt');
  const uiDone = path.join(root, 'ui-done'); // the runner's part is over: the tests may end

  // What a user has: Node (code-server's own) and Python on PATH; no `symposium`.
  const PATH = [path.dirname(process.execPath), ...(process.env.PATH ?? '').split(path.delimiter)]
    .filter((dir, i, all) => dir && all.indexOf(dir) === i && !fs.existsSync(path.join(dir, 'symposium')))
    .join(path.delimiter);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH,
    XDG_CONFIG_HOME: dirs.config, XDG_DATA_HOME: dirs.data, XDG_CACHE_HOME: dirs.cache, XDG_STATE_HOME: dirs.state,
    TMPDIR: dirs.tmp,
    npm_config_cache: path.join(dirs.cache, 'npm'),
    SYMPOSIUM_INSTALL_REPORT: report,
    SYMPOSIUM_INSTALL_USER_DATA: dirs['user-data'],
    SYMPOSIUM_INSTALL_UI_DONE: uiDone,
  };
  const wheelhouse = await ensureWheelhouse(vsix, PATH);
  Object.assign(env, { PIP_FIND_LINKS: wheelhouse, PIP_NO_INDEX: '1' });
  delete env.SYMPOSIUM_BACKEND;
  delete env.SYMPOSIUM_STATE_DIR;

  const server = await new FileServer().start();
  const checks: Check[] = [];
  let code: ChildProcess | undefined;
  let browser: Browser | undefined;
  const log = fs.openSync(path.join(OUT, 'code-server.log'), 'w');
  try {
    // The test catalogue: the echo agent, as an npm tarball served beside it.
    const tarball = await packEchoAgent(dirs.serve);
    server.routes.set('/echo-agent-1.0.0.tgz', { body: fs.readFileSync(tarball) });
    server.routes.set('/registry.json', {
      type: 'application/json',
      body: JSON.stringify({
        version: '1.0.0',
        agents: [{
          id: 'echo-agent', name: 'Echo Agent', version: '1.0.0', description: 'Echoes each prompt (Symposium tests)',
          distribution: { npx: { package: server.url('/echo-agent-1.0.0.tgz'), args: ['--prefix', 'Catalogue'] } },
        }],
        extensions: [],
      }),
    });
    env.SYMPOSIUM_INSTALL_CATALOGUE = server.url('/registry.json');

    const installed = await run(CODE_SERVER, ['--install-extension', vsix, '--extensions-dir', dirs.extensions, '--user-data-dir', dirs['user-data']], { env, timeoutMs: 120_000 });
    fs.appendFileSync(path.join(OUT, 'install-extension.log'), `${installed.stdout}\n${installed.stderr}`);
    if (installed.code !== 0) {
      throw new Error(`code-server --install-extension failed: ${installed.stderr || installed.stdout}`);
    }
    const driver = prepareDriver(root);

    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    code = spawn(
      CODE_SERVER,
      serveArgs(port, dirs),
      { detached: true, stdio: ['ignore', log, log], env },
    );
    await waitForServer(code, `${base}/healthz`, OUT);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
    const remote = (p: string) => `vscode-remote://127.0.0.1:${port}${p}`;
    const payload = [
      ['extensionDevelopmentPath', remote(driver)],
      ['extensionTestsPath', remote(path.join(driver, 'out', 'test', 'installed', 'index.js'))],
    ];
    const page = await newPage(browser, OUT, 'tests');
    let exit!: (code: number) => void;
    const exited = new Promise<number>((resolve) => (exit = resolve));
    await page.exposeFunction('codeAutomationExit', (c: number) => exit(c));
    await page.goto(`${base}/?folder=${encodeURIComponent(dirs.workspace)}&payload=${encodeURIComponent(JSON.stringify(payload))}`);

    // The user's part, while the tests run. Under the test driver VS Code shows no notification
    // toasts, so the notification centre is opened to see them.
    await openNotifications(page);
    const setupShown = Promise.any([notification(page, 'setting up its backend', OUT), notification(page, 'backend is ready', OUT)]);
    const picked = pickInAddAgent(page, 'Echo Agent');
    // Picking closes the centre; the message stays in it until dismissed. Its "Manage Agents" button
    // opens Manage Agents, which shows the agent as installed. Then the tests may end.
    const installedShown = picked.then(() => openNotifications(page)).then(() => notification(page, 'Echo Agent 1.0.0 is installed', OUT));
    const managed = installedShown
      .then(() => manageAgentsRow(page, 'Echo Agent', () => page.locator('.notifications-center .notification-list-item', { hasText: 'Echo Agent 1.0.0 is installed' }).getByRole('button', { name: 'Manage Agents' }).click()))
      .finally(() => fs.writeFileSync(uiDone, ''));
    let timer: NodeJS.Timeout | undefined;
    const result = await Promise.race([
      exited,
      new Promise<number>((_, reject) => (timer = setTimeout(() => reject(new Error(`the install tests did not finish in ${TIMEOUT_MS / 1000} s`)), TIMEOUT_MS))),
    ]).finally(() => clearTimeout(timer));
    await page.screenshot({ path: path.join(OUT, 'window.png') }).catch(() => undefined);
    checks.push(await settle('the one-time setup showed a notification (its progress, or that it is done)', setupShown));
    checks.push(await settle('Add Agent listed the test catalogue\'s agent, and it was picked', picked));
    const note = await settle('a notification said the agent is installed, and what it offers to sign in', installedShown, (text) => /Echo key/.test(text));
    checks.push(note);
    checks.push(await settle('Manage Agents (from the message\'s button) shows the agent\'s pinned version and its sign-in', managed, (text) => /1\.0\.0, pinned/.test(text) && /Echo key/.test(text)));
    process.stdout.write(readIfThere(report) || '(the tests wrote no report)\n');
    for (const check of checks) {
      console.log(`  ${check.ok ? '✔' : '✖'} UI: ${check.name}${check.detail ? ` (${check.detail})` : ''}`);
    }
    const tally = /^(\d+) passed, (\d+) failed/m.exec(readIfThere(report));
    const passed = Number(tally?.[1] ?? 0) + checks.filter((c) => c.ok).length;
    const failed = (tally ? Number(tally[2]) : 1) + checks.filter((c) => !c.ok).length;
    console.log(`install phase: ${((Date.now() - started) / 1000).toFixed(1)} s`);
    console.log(`install: ${passed} passed, ${failed} failed`);
    return result === 0 && failed === 0 ? 0 : 1;
  } catch (error) {
    console.error(`the install phase failed: ${error instanceof Error ? error.stack : error}`);
    console.error(`logs: ${OUT}`);
    process.stdout.write(readIfThere(report));
    console.log('install: 0 passed, 1 failed');
    return 1;
  } finally {
    await endWindow(browser, code, dirs['user-data'], OUT, log);
    await server.close();
    fs.rmSync(root, { recursive: true, force: true });
  }
}

/**
 * The backend's dependencies as wheels, for the Python the extension will find on `PATH`: downloaded
 * once (from the package index), kept in WHEELHOUSE_CACHE, keyed by that Python and the lock the vsix
 * carries (the files it names, by hash: the extension checks them again when it installs from here).
 */
async function ensureWheelhouse(vsix: string, PATH: string): Promise<string> {
  const python = await findPython('', { ...process.env, PATH });
  const unpacked = fs.mkdtempSync(path.join(os.tmpdir(), 'symposium-vsix-'));
  try {
    // The lock inside the vsix is what the extension installs: download what it names.
    const unzip = 'import sys, zipfile\nz = zipfile.ZipFile(sys.argv[1])\nprint(z.extract("extension/backend/requirements.txt", sys.argv[2]))\n';
    const lock = (await run(python.path, ['-c', unzip, vsix, unpacked])).stdout.trim();
    if (!lock || !fs.existsSync(lock)) {
      throw new Error(`the vsix carries no extension/backend/requirements.txt: ${vsix}`);
    }
    const key = crypto.createHash('sha256').update(python.version).update(fs.readFileSync(lock)).digest('hex').slice(0, 16);
    const cache = process.env.WHEELHOUSE_CACHE ?? path.join(os.homedir(), '.cache', 'symposium-vscode');
    const wheelhouse = path.join(cache, `wheels-${key}`);
    if (fs.existsSync(path.join(wheelhouse, '.done'))) {
      return wheelhouse;
    }
    const partial = `${wheelhouse}.partial`;
    fs.rmSync(partial, { recursive: true, force: true });
    const done = await run(python.path, ['-m', 'pip', 'download', '--quiet', '--disable-pip-version-check', '--require-hashes', '--only-binary', ':all:', '-d', partial, '-r', lock], { timeoutMs: 10 * 60_000 });
    if (done.code !== 0) {
      throw new Error(`pip download of the backend's dependencies failed: ${done.stderr}`);
    }
    fs.writeFileSync(path.join(partial, '.done'), '');
    fs.rmSync(wheelhouse, { recursive: true, force: true });
    fs.renameSync(partial, wheelhouse);
    return wheelhouse;
  } finally {
    fs.rmSync(unpacked, { recursive: true, force: true });
  }
}

/** The driver: a development extension holding only the tests (Symposium is the installed vsix). */
function prepareDriver(root: string): string {
  const driver = path.join(root, 'driver');
  fs.mkdirSync(path.join(driver, 'out', 'test'), { recursive: true });
  const manifest = { name: 'symposium-install-tests', publisher: 'symposium-test', version: '0.0.1', engines: { vscode: '^1.104.0' }, activationEvents: [] };
  fs.writeFileSync(path.join(driver, 'package.json'), JSON.stringify(manifest, null, 2));
  fs.cpSync(path.join(EXTENSION, 'out', 'test', 'installed'), path.join(driver, 'out', 'test', 'installed'), { recursive: true });
  fs.symlinkSync(path.join(EXTENSION, 'node_modules'), path.join(driver, 'node_modules')); // mocha
  return driver;
}

/** Opens Manage Agents (with `open`) and reads the row of `label`. */
async function manageAgentsRow(page: Page, label: string, open: () => Promise<void>): Promise<string> {
  await open();
  const row = page.locator('.quick-input-widget', { hasText: 'Symposium: Manage Agents' }).locator('.monaco-list-row', { hasText: label }).first();
  await row.waitFor({ timeout: 30_000 });
  const text = (await row.innerText()).replace(/\s+/g, ' ');
  await page.keyboard.press('Escape');
  return text;
}

async function settle(name: string, promise: Promise<string>, accept: (text: string) => boolean = () => true): Promise<Check> {
  try {
    const text = await promise;
    return { name, ok: accept(text), detail: text.slice(0, 200) };
  } catch (error) {
    return { name, ok: false, detail: error instanceof Error ? error.message.split('\n')[0] : String(error) };
  }
}

function readIfThere(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
