// The bare-machine phase of the integration tests: the linux-x64 vsix in a clean code-server profile on a
// PATH with no Python and no Node.js, and no Python package index within reach. The extension provisions a
// Python with the uv it carries, from a python-build-standalone-like archive this runner serves on
// 127.0.0.1 (UV_PYTHON_DOWNLOADS_JSON_URL: docs/development.md, "Packages per platform"), installs its
// backend from the wheels it carries; Add Agent installs Claude Code from the shipped catalogue with the
// npm the vsix carries (from the npm registry) and runs it on the extension host's Node; then Claude Code
// answers in the Chat view against its fake model API.
//
//   node out/test/bare.js --vsix FILE          (the linux-x64 vsix: `TARGET=linux-x64`)
//
// Environment: CODE_SERVER (required), CHROMIUM (default /usr/bin/chromium), SYMPOSIUM_BACKEND (the
// repository's .venv/bin/symposium: its Python makes the archive and serves the fake API), WHEELHOUSE_CACHE
// (where the archive and npm's cache are kept between runs). Logs go to out/bare/.
//
// The user types Claude Code's API key in the Sign in box (Symposium: Sign In to an Agent), which keeps it in
// SecretStorage; the fake API's address (no secret) reaches it through the environment code-server starts with.

import { ChildProcess, spawn } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Browser, chromium } from 'playwright-core';
import { ChatView, runCommand } from './chatView';
import { endWindow, freePort, newPage, QUIET_SETTINGS, serveArgs, waitForServer } from './codeServer';
import { FakeAgent, repositoryOf } from './fakeAgent';
import { FileServer } from './fixtures';
import { notification, openCommand, openNotifications, pickInAddAgent, signInWithKey } from './notifications';
import { findPython, run } from '../setup';

const EXTENSION = path.resolve(__dirname, '../..');
const OUT = path.join(EXTENSION, 'out', 'bare');
const CODE_SERVER = process.env.CODE_SERVER ?? '';
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const SYMPOSIUM = process.env.SYMPOSIUM_BACKEND ?? path.resolve(EXTENSION, '../.venv/bin/symposium');
const CACHE = process.env.WHEELHOUSE_CACHE ?? path.join(os.homedir(), '.cache', 'symposium-vscode');
/** Python provisioned, the backend installed, Claude Code downloaded from the npm registry and started. */
const INSTALL_MS = 15 * 60_000;
/** What the user must not have: programs that would let the extension find a Python or a Node. */
const HIDDEN = /^(python|pip|pydoc|idle|2to3|node|nodejs|npm|npx|corepack|uv|uvx|pyenv)/;

interface Check {
  name: string;
  ok: boolean;
  detail?: string;
}

async function main(): Promise<number> {
  const vsixArg = process.argv.indexOf('--vsix');
  const vsix = vsixArg > 0 ? path.resolve(process.argv[vsixArg + 1]) : '';
  const repository = repositoryOf(SYMPOSIUM);
  if (!CODE_SERVER || !vsix || !fs.existsSync(vsix) || !repository) {
    throw new Error('usage: CODE_SERVER=... SYMPOSIUM_BACKEND=<repo>/.venv/bin/symposium node out/test/bare.js --vsix FILE');
  }
  fs.rmSync(OUT, { recursive: true, force: true });
  fs.mkdirSync(OUT, { recursive: true });
  const started = Date.now();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'symposium-bare-'));
  const dirs = Object.fromEntries(
    ['user-data', 'extensions', 'config', 'data', 'cache', 'state', 'tmp', 'workspace', 'bin'].map((d) => [d, path.join(root, d)]),
  );
  Object.values(dirs).forEach((d) => fs.mkdirSync(d, { recursive: true }));
  fs.writeFileSync(path.join(dirs.workspace, 'README.md'), '# A workspace for the bare-machine test\n');
  const PATH = barePath(dirs.bin);
  const checks: Check[] = [];
  const check = (name: string, ok: boolean, detail = '') => checks.push({ name, ok, detail });

  // The machine: no Python >= 3.11 and no Node.js for the extension to find.
  const noPython = await findPython('', { PATH }).then((p) => `found ${p.path}`, () => '');
  check('the PATH the extension gets has no Python 3.11 or later and no node or npm', !noPython && !fs.readdirSync(dirs.bin).some((f) => HIDDEN.test(f)), noPython);

  const server = await new FileServer().start();
  const archive = await pythonArchive(repository.python);
  server.routes.set(`/python/${archive.file}`, { body: fs.readFileSync(archive.path) });
  server.routes.set('/downloads.json', { type: 'application/json', body: JSON.stringify(downloadsJson(archive, server.url(`/python/${archive.file}`))) });

  const fake = await FakeAgent.start('claude', repository);
  fake.script({ answers: 'Say hello', text: ['Hello ', 'from a machine with nothing but VS Code.'] });
  const { PATH: _agentPath, ANTHROPIC_API_KEY: key, ...agentEnv } = fake.entry.env;
  const env: NodeJS.ProcessEnv = {
    ...withoutPackageSettings(process.env),
    ...agentEnv, // the fake API's URL, the agent's own HOME (see the header); its key is typed in
    PATH,
    // VS Code's server would otherwise take PATH from a login shell (`resolveShellEnv`), whose profile puts
    // the system's folders, Python and Node among them, back: as if VS Code were started from a terminal.
    VSCODE_CLI: '1',
    XDG_CONFIG_HOME: dirs.config, XDG_DATA_HOME: dirs.data, XDG_CACHE_HOME: dirs.cache, XDG_STATE_HOME: dirs.state,
    TMPDIR: dirs.tmp,
    UV_PYTHON_DOWNLOADS_JSON_URL: server.url('/downloads.json'),
    PIP_INDEX_URL: 'http://127.0.0.1:9/simple', // nothing listens there: no package index for the backend
    npm_config_cache: path.join(CACHE, 'npm-cache-bare'), // npm's downloads, kept between runs
  };
  let code: ChildProcess | undefined;
  let browser: Browser | undefined;
  const log = fs.openSync(path.join(OUT, 'code-server.log'), 'w');
  // code-server is a Node script: started with this Node (24) by path, as nothing on PATH runs it.
  const codeServer = [process.execPath, fs.realpathSync(CODE_SERVER)];
  try {
    const installed = await run(codeServer[0], [codeServer[1], '--install-extension', vsix, '--extensions-dir', dirs.extensions, '--user-data-dir', dirs['user-data']], { env, timeoutMs: 120_000 });
    if (installed.code !== 0) {
      throw new Error(`code-server --install-extension failed: ${installed.stderr || installed.stdout}`);
    }
    writeSettings(dirs['user-data']);
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    code = spawn(
      codeServer[0],
      [codeServer[1], ...serveArgs(port, dirs)],
      { detached: true, stdio: ['ignore', log, log], env },
    );
    await waitForServer(code, `${base}/healthz`, OUT);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
    const page = await newPage(browser, OUT, 'bare');
    // As the other phases' windows: one with a development extension (here an empty one; Symposium is the
    // installed vsix), in which Copilot Chat answers with an extension's model without a GitHub sign-in.
    const driver = path.join(root, 'driver');
    fs.mkdirSync(driver);
    fs.writeFileSync(path.join(driver, 'package.json'), JSON.stringify({ name: 'symposium-bare-driver', publisher: 'symposium-test', version: '0.0.1', engines: { vscode: '^1.104.0' } }));
    const payload = [['extensionDevelopmentPath', `vscode-remote://127.0.0.1:${port}${driver}`]];
    await page.goto(`${base}/?folder=${encodeURIComponent(dirs.workspace)}&payload=${encodeURIComponent(JSON.stringify(payload))}`);

    // Add Agent: Claude Code from the shipped catalogue. Its first start needs the backend, set up once.
    await openCommand(page, 'Symposium: Add Agent');
    const picked = await pickInAddAgent(page, 'Claude Code').then((text) => text, (error: Error) => `(not picked: ${error.message})`);
    check('Add Agent lists Claude Code from the catalogue, and it is picked', picked.includes('Claude Code'), picked.slice(0, 120));
    await openNotifications(page);
    const ready = await notification(page, 'backend is ready', OUT, INSTALL_MS).catch((error: Error) => `(none: ${error.message.split('\n')[0]})`);
    check('the backend was set up: "Symposium\'s backend is ready"', /backend is ready/.test(ready), ready.slice(0, 160));
    // Installed and started, or the error that says why not (whichever comes first).
    const installedNote = await Promise.any(['Claude Code 0.100.0 is installed', 'Could not install Claude Code', 'does not start'].map((text) => notification(page, text, OUT, INSTALL_MS)))
      .catch((error: Error) => `(none: ${error.message.split('\n')[0]})`);
    check('a notification says Claude Code is installed, and it started', /Claude Code 0\.100\.0 is installed \(pinned\)/.test(installedNote) && !/does not start/.test(installedNote), installedNote.slice(0, 300));
    await page.keyboard.press('Escape');

    // What was installed, and with what: the storage the extension wrote.
    const storage = path.join(dirs['user-data'], 'User', 'globalStorage', 'symposium-dev.symposium');
    const stamp = readJson(path.join(storage, 'venv', 'symposium-stamp.json')) as { python?: string } | undefined;
    check('the backend venv was built with the Python uv provisioned into the extension\'s storage', Boolean(stamp?.python?.startsWith(path.join(storage, 'python'))), stamp?.python ?? '(no venv)');
    const record = readJson(path.join(storage, 'agents', 'claude-acp@0.100.0', 'symposium-install.json')) as { command?: string; args?: string[] } | undefined;
    check('Claude Code runs on the extension host\'s Node (this Node, not one on PATH)', record?.command === process.execPath, record?.command ?? '(no install record)');

    // The key, typed in the Sign in box as a user pastes it.
    const signedIn = await signInWithKey(page, 'Claude Code', 'Anthropic API key', key, INSTALL_MS).then(() => '', async (error: Error) => {
      await page.screenshot({ path: path.join(OUT, 'sign-in.png') }).catch(() => undefined);
      return error.message.split('\n').slice(0, 3).join(' ');
    });
    check('the key typed in the Sign in box: "Signed in to Claude Code"', !signedIn, signedIn);

    // Developer: Reload Window, as docs/usage.md tells a user with no GitHub account to do once the backend is
    // set up: VS Code (1.139) sends a chat to an extension's models with no GitHub sign-in only when it knew them
    // as the window started; before, its Copilot setup asks for a sign-in (docs/development.md).
    const reloaded = page.waitForEvent('load', { timeout: INSTALL_MS });
    await runCommand(page, 'Developer: Reload Window').catch(() => undefined); // the page goes while the palette closes
    await reloaded;

    // The Chat view: Claude Code answers against its fake API.
    const chat = new ChatView(page);
    let answer = '';
    try {
      await chat.enableCopilotAndPick('Eliza (Symposium)', path.join(OUT, 'model-picker.png'));
      await chat.pick('Claude Code (ACP)', 'ACP agent'); // the agent's own row, above its models
      await chat.newChat('Agent');
      // Copilot Chat asks a user with no GitHub account to sign in when a chat starts; closing its
      // dialog, as such a user does, lets the extension's model answer.
      const dialog = page.locator('.monaco-dialog-box', { hasText: 'Sign in to use GitHub Copilot' });
      const closing = dialog.waitFor({ timeout: INSTALL_MS }).then(() => page.keyboard.press('Escape'), () => undefined);
      answer = (await chat.send('Say hello')).text;
      void closing;
    } catch (error) {
      answer = `(no answer: ${error instanceof Error ? error.message.split('\n')[0] : error})`;
      await page.screenshot({ path: path.join(OUT, 'chat.png') }).catch(() => undefined);
    }
    check('Claude Code answers in the Chat view', /from a machine with nothing but VS Code/.test(answer), answer.slice(0, 200));
    const settingsText = ['User', 'Machine'].map((d) => readText(path.join(dirs['user-data'], d, 'settings.json'))).join('\n');
    check('no settings file holds the key', !settingsText.includes(key));
    await page.screenshot({ path: path.join(OUT, 'window.png') }).catch(() => undefined);
  } catch (error) {
    check('the bare-machine phase ran to its end', false, error instanceof Error ? error.stack : String(error));
  } finally {
    await endWindow(browser, code, dirs['user-data'], OUT, log);
    await fake.stop();
    await server.close();
    fs.rmSync(root, { recursive: true, force: true });
  }
  for (const c of checks) {
    console.log(`  ${c.ok ? '✔' : '✖'} bare machine: ${c.name}${c.detail ? ` (${c.detail})` : ''}`);
  }
  const failed = checks.filter((c) => !c.ok).length;
  console.log(`bare-machine phase: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  console.log(`bare machine: ${checks.length - failed} passed, ${failed} failed`);
  return failed ? 1 : 0;
}

/** A folder of links to every program of the system's folders but Python's, Node's and their kin. */
function barePath(dir: string): string {
  for (const folder of ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin']) {
    let names: string[] = [];
    try {
      names = fs.readdirSync(folder);
    } catch {
      continue;
    }
    for (const name of names) {
      const link = path.join(dir, name);
      if (!HIDDEN.test(name) && !fs.existsSync(link)) {
        fs.symlinkSync(path.join(folder, name), link);
      }
    }
  }
  return dir;
}

/** The environment without the settings that would point pip, uv or npm at this machine's own setup. The
 * machine's certificate authorities stay (NODE_EXTRA_CA_CERTS and the like): a user behind a proxy that
 * re-signs TLS has them too. */
function withoutPackageSettings(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => name === 'NODE_EXTRA_CA_CERTS' || !/^(PIP_|UV_|PYTHON|VIRTUAL_ENV|PYENV|npm_|NODE_|SYMPOSIUM_)/i.test(name)));
}

interface Archive {
  path: string;
  file: string;
  sha256: string;
  version: [number, number, number];
}

/**
 * A Python laid out as python-build-standalone's `install_only` archives are (`python/bin/python3.X`,
 * `python/lib/python3.X/`, and `python/lib/libpython3.X.so*` where it is shared), made from the base
 * interpreter of `python` (this machine's own: the tests' .venv is built from it). Kept in the cache by
 * that interpreter and its version. uv needs no more: docs/development.md, "Packages per platform".
 */
async function pythonArchive(python: string): Promise<Archive> {
  const script = `
import hashlib, json, os, shutil, sys, sysconfig, tarfile, tempfile
cache = sys.argv[1]
v = "%d.%d" % sys.version_info[:2]
full = "%d.%d.%d" % sys.version_info[:3]
exe = os.path.realpath(getattr(sys, "_base_executable", sys.executable))
key = hashlib.sha256(exe.encode()).hexdigest()[:12]
name = f"cpython-{full}-x86_64-unknown-linux-gnu-install_only-{key}.tar.gz"
target = os.path.join(cache, name)
if not os.path.exists(target):
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "python")
        os.makedirs(os.path.join(root, "bin"))
        shutil.copy2(exe, os.path.join(root, "bin", f"python{v}"))
        for alias in ("python3", "python"):
            os.symlink(f"python{v}", os.path.join(root, "bin", alias))
        skip = {"site-packages", "dist-packages", "test", "idlelib", "tkinter", "turtledemo", "__pycache__"}
        shutil.copytree(sysconfig.get_path("stdlib"), os.path.join(root, "lib", f"python{v}"), symlinks=True,
                        ignore=lambda d, names: [n for n in names if n in skip])
        os.makedirs(os.path.join(root, "lib", f"python{v}", "site-packages"))
        if sysconfig.get_config_var("Py_ENABLE_SHARED"):
            lib = os.path.join(sysconfig.get_config_var("LIBDIR"), sysconfig.get_config_var("INSTSONAME"))
            shutil.copy2(lib, os.path.join(root, "lib"))
        os.makedirs(cache, exist_ok=True)
        with tarfile.open(target + ".partial", "w:gz") as archive:
            archive.add(root, "python")
        os.replace(target + ".partial", target)
print(json.dumps({"path": target, "file": name, "version": list(sys.version_info[:3])}))
`;
  const done = await run(python, ['-c', script, path.join(CACHE, 'python-archives')], { timeoutMs: 10 * 60_000 });
  if (done.code !== 0) {
    throw new Error(`could not make a Python archive from ${python}: ${done.stderr}`);
  }
  const made = JSON.parse(done.stdout.trim()) as Omit<Archive, 'sha256'>;
  return { ...made, sha256: crypto.createHash('sha256').update(fs.readFileSync(made.path)).digest('hex') };
}

/** uv's list of Python downloads (the format of its own download-metadata.json) with the one archive. */
function downloadsJson(archive: Archive, url: string): object {
  const [major, minor, patch] = archive.version;
  return {
    [`cpython-${major}.${minor}.${patch}-linux-x86_64-gnu`]: {
      name: 'cpython', arch: { family: 'x86_64', variant: null }, os: 'linux', libc: 'gnu',
      major, minor, patch, prerelease: '', url, sha256: archive.sha256, variant: null,
    },
  };
}

function writeSettings(userData: string): void {
  const settings = {
    'symposium.catalogue.url': '', // the catalogue the vsix ships
    ...QUIET_SETTINGS,
  };
  for (const scope of ['User', 'Machine']) {
    fs.mkdirSync(path.join(userData, scope), { recursive: true });
    fs.writeFileSync(path.join(userData, scope, 'settings.json'), JSON.stringify(settings, null, 2));
  }
}

function readText(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

function readJson(file: string): unknown {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
