// The backend's private venv: the wheel the vsix carries, installed once (and again after an upgrade)
// into the extension's global storage, with a Python >= 3.11 found on this machine. No `vscode`
// import, so the unit tests run it in plain node.

import { execFile } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Log } from './backend';
import { findOnPath } from './config';

export const MIN_PYTHON: [number, number] = [3, 11];
/** What uv is asked for when no Python is found (`runtimes.ts`): any Python Symposium supports. */
export const PYTHON_REQUEST = `>=${MIN_PYTHON.join('.')}`;
/** Tried in this order when `symposium.python` is empty (the newest first): each a program on PATH
 * and the arguments that make it a Python. On Windows the `py` launcher (python.org's installer puts
 * it on PATH) with `-3` runs the newest Python 3 installed; then `python` (`python.exe`). */
export function pythonCandidates(platform: NodeJS.Platform = process.platform): { name: string; args: string[] }[] {
  const names = platform === 'win32'
    ? ['py', 'python', 'python3']
    : ['python3.14', 'python3.13', 'python3.12', 'python3.11', 'python3', 'python'];
  return names.map((name) => ({ name, args: name === 'py' ? ['-3'] : [] }));
}
const STAMP = 'symposium-stamp.json';
const INSTALL_TIMEOUT_MS = 10 * 60_000;

/** Setup failed; `fix` says what the user can do about it. */
export class SetupError extends Error {
  constructor(message: string, readonly fix: string, readonly detail = '') {
    super(message);
    this.name = 'SetupError';
  }
}

export interface Python {
  path: string; // absolute
  version: string; // "3.12.4"
}

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a program to its end; never throws for a non-zero exit (ENOENT and the like become code 127).
 * Without a `cwd`, it runs in the extension host's working folder: a workspace, when VS Code was started
 * as `code .` in it. Whatever runs a Python, or uv, gives one in the extension's storage (below). */
export function run(command: string, args: string[], options: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { env: options.env ?? process.env, cwd: options.cwd, timeout: options.timeoutMs ?? 60_000, maxBuffer: 64 * 1024 * 1024, windowsHide: true },
      (error, stdout, stderr) => {
        const code = error ? (typeof (error as { code?: unknown }).code === 'number' ? (error as { code: number }).code : 127) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) || (error && code === 127 ? error.message : '') });
      },
    );
  });
}

const VERSION_PROBE = 'import sys; print(sys.executable); print("%d.%d.%d" % sys.version_info[:3])';

/** What `python` (with `args`, `-3` for the `py` launcher) is, if it runs at all: its real path and version.
 * `-I`: not the working folder's modules (a `sitecustomize.py` there), nor PYTHONPATH's. */
export async function probePython(python: string, env: NodeJS.ProcessEnv = process.env, args: string[] = []): Promise<Python | undefined> {
  // PATH's relative entries left out: a launcher (`py`, a pyenv shim) looks the real Python up on it.
  const { code, stdout } = await run(python, [...args, ...ISOLATED, '-c', VERSION_PROBE], { env: withAbsolutePath(env), timeoutMs: 20_000 });
  const [exe, version] = stdout.trim().split(/\r?\n/);
  return code === 0 && exe && /^\d+\.\d+\.\d+$/.test(version ?? '') ? { path: exe, version } : undefined;
}

export function recentEnough(version: string): boolean {
  const [major, minor] = version.split('.').map(Number);
  return major > MIN_PYTHON[0] || (major === MIN_PYTHON[0] && minor >= MIN_PYTHON[1]);
}

/**
 * The Python to build venvs with: the `symposium.python` setting when set (it must be >= 3.11), else
 * the first of python3.14 … python3.11, python3, python on PATH that is >= 3.11.
 */
export async function findPython(setting: string, env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): Promise<Python> {
  const want = `${MIN_PYTHON.join('.')} or later`;
  if (setting.trim()) {
    const found = await probePython(setting.trim(), env);
    if (!found) {
      throw new SetupError(`The symposium.python setting names "${setting}", which does not run`, `Set symposium.python to a Python ${want}, or clear it to let Symposium look on PATH.`);
    }
    if (!recentEnough(found.version)) {
      throw new SetupError(`The symposium.python setting names Python ${found.version}; Symposium needs ${want}`, `Set symposium.python to a Python ${want}.`);
    }
    return found;
  }
  const seen: string[] = [];
  for (const { name, args } of pythonCandidates(platform)) {
    const onPath = findOnPath(name, absolutePath(pathOf(env), platform), platform, env.PATHEXT ?? '');
    if (!onPath) {
      continue;
    }
    const found = await probePython(onPath, env, args);
    if (found && recentEnough(found.version)) {
      return found;
    }
    const shown = [onPath, ...args].join(' ');
    seen.push(found ? `${shown} is ${found.version}` : `${shown} does not run`);
  }
  throw new SetupError(
    `Symposium runs its backend with Python ${want}, and found none on PATH${seen.length ? ` (${seen.join('; ')})` : ''}`,
    `Install Python ${want} (python.org, or your system's packages), or set symposium.python to one you have.`,
  );
}

/** The venv's own python: what the backend and the agents installed from PyPI run with. */
export function venvPython(venv: string, platform: NodeJS.Platform = process.platform): string {
  return platform === 'win32' ? path.join(venv, 'Scripts', 'python.exe') : path.join(venv, 'bin', 'python');
}

/** PATH, whatever the case of its name (Windows' environment names are case-insensitive: `Path`). */
export function pathOf(env: NodeJS.ProcessEnv): string {
  return env.PATH ?? Object.entries(env).find(([name]) => name.toUpperCase() === 'PATH')?.[1] ?? '';
}

/** PATH's absolute folders only: a relative entry (`.`, `.venv/bin`) names a folder of the extension
 * host's working folder, a workspace when VS Code was started as `code .` in it, so a Python found there
 * would be the workspace's, run before any trust is given (docs/reliability.md, "What the workspace cannot do"). */
export function absolutePath(pathValue: string, platform: NodeJS.Platform = process.platform): string {
  const windows = platform === 'win32';
  const isAbsolute = windows ? path.win32.isAbsolute : path.posix.isAbsolute;
  return pathValue.split(windows ? ';' : ':').filter((dir) => dir && isAbsolute(windows ? dir.replace(/^"(.*)"$/, '$1') : dir)).join(windows ? ';' : ':');
}

/** `env` with PATH's relative entries left out (`absolutePath`), whatever the case of its name. */
export function withAbsolutePath(env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): NodeJS.ProcessEnv {
  const name = Object.keys(env).find((n) => n.toUpperCase() === 'PATH');
  return name === undefined ? env : { ...env, [name]: absolutePath(env[name] ?? '', platform) };
}

/** `-I`: the backend runs with the workspace as its working folder, which `-m` would otherwise put
 * first on `sys.path`, so a workspace `secrets.py` or `protocol/` would be imported inside the backend
 * (docs/reliability.md, "What the workspace cannot do"); `-m venv` and `-m pip` likewise. */
export const ISOLATED = ['-I'];

/** How the backend in `venv` is started (without `vscodelm`). */
export function backendArgv(venv: string): string[] {
  return [venvPython(venv), ...ISOLATED, '-m', 'symposium'];
}

/** The uv to use: the one the vsix carries, else one on PATH, else none (then venv and pip). */
export function uvOf(env: NodeJS.ProcessEnv, bundled?: string): string | undefined {
  return bundled ?? findOnPath('uv', absolutePath(pathOf(env)));
}

/** Where uv's Pythons go: the extension's storage, never the user's own (`~/.local/share/uv`). */
export function pythonsFolder(storage: string): string {
  return path.join(storage, 'python');
}

/** What every run of uv is given (docs/reliability.md, "What the workspace cannot do"): its working folder
 * in the extension's storage, never the extension host's (a workspace's `.venv`, `pyproject.toml`,
 * `uv.toml`, `.python-version`, or those of a folder above it, would otherwise steer it); no configuration
 * file (`--no-config`); its own cache and Pythons in the storage; only Pythons it installed there
 * (`--python-preference only-managed`: a Python named by its path, the user's `symposium.python` or the one
 * found on PATH, is still used, as named). `command` and `env` as `run` takes them. */
export function uvCommand(uv: string, args: string[], storage: string, env: NodeJS.ProcessEnv): { command: string; args: string[]; env: NodeJS.ProcessEnv; cwd: string } {
  return { command: uv, args: [...args, '--no-config', '--python-preference', 'only-managed'], env: uvEnv(env, storage), cwd: storage };
}

/** Runs uv confined (`uvCommand`), its working folder made first. */
export function runUv(uv: string, args: string[], storage: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<Run> {
  fs.mkdirSync(storage, { recursive: true, mode: 0o700 });
  const confined = uvCommand(uv, args, storage, env);
  return run(confined.command, confined.args, { env: confined.env, cwd: confined.cwd, timeoutMs });
}

/** Creates a venv at `dir` with `python` (through uv when there is one); returns what ran, for errors.
 * `storage`: the extension's, where uv and Python run (never the extension host's working folder). */
export async function createVenv(dir: string, python: Python, env: NodeJS.ProcessEnv, log: Log, storage: string, bundledUv?: string): Promise<void> {
  const uv = uvOf(env, bundledUv);
  const [command, args] = uv ? [uv, ['venv', '--quiet', '--no-project', '--python', python.path, dir]] : [python.path, [...ISOLATED, '-m', 'venv', dir]];
  log.info(`creating a venv: ${command} ${args.join(' ')}`);
  fs.mkdirSync(storage, { recursive: true, mode: 0o700 });
  const done = uv ? await runUv(uv, args, storage, env, 120_000) : await run(command, args, { env, cwd: storage, timeoutMs: 120_000 });
  if (done.code !== 0) {
    throw new SetupError(
      `Could not create a Python venv with ${python.path} (${python.version})`,
      process.platform === 'linux' && !uv
        ? `Install the venv module for that Python (on Debian and Ubuntu: apt install python3-venv), or set symposium.python to another Python.`
        : 'Set symposium.python to another Python.',
      tail(done),
    );
  }
}

/** `pip install` (or `uv pip install`) into the venv; `what` names the thing for error messages. */
export async function pipInstall(venv: string, requirements: string[], what: string, env: NodeJS.ProcessEnv, log: Log, storage: string, bundledUv?: string): Promise<void> {
  const uv = uvOf(env, bundledUv);
  const python = venvPython(venv);
  const [command, args] = uv
    ? [uv, ['pip', 'install', '--quiet', '--python', python, ...requirements]]
    : [python, [...ISOLATED, '-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', ...requirements]];
  log.info(`installing ${what}: ${command} ${args.join(' ')}`);
  fs.mkdirSync(storage, { recursive: true, mode: 0o700 });
  const done = uv ? await runUv(uv, args, storage, env, INSTALL_TIMEOUT_MS) : await run(command, args, { env, cwd: storage, timeoutMs: INSTALL_TIMEOUT_MS });
  if (done.code === 0) {
    return;
  }
  const output = `${done.stderr}\n${done.stdout}`;
  const offline = /Failed to establish a new connection|Temporary failure in name resolution|Name or service not known|Network is unreachable|ConnectTimeout|Connection refused|error sending request|dns error/i.test(output);
  const missing = /Could not find a version|No matching distribution|No solution found|not find a version/i.test(output);
  // pip's and uv's words for a download whose sha256 is not the one the lock names (docs/reliability.md, "What the extension installs").
  const tampered = /DO NOT MATCH THE HASHES|Hash mismatch|hashes are required|Hashes are required/i.test(output);
  const noPip = /No module named pip/.test(output);
  const [message, fix] = tampered
    ? [`Could not install ${what}: a package downloaded for it is not one this version of Symposium was built and tested with (its sha256 differs from the one it carries)`,
      'If you set a package index (PIP_INDEX_URL, PIP_FIND_LINKS or pip.conf), it must serve PyPI\'s own files; otherwise report it: nothing was installed.']
    : offline
    ? [`Could not install ${what}: its Python packages come from PyPI, which could not be reached (offline?)`,
      'Connect to the network (or set PIP_INDEX_URL / PIP_FIND_LINKS to a mirror or a folder of wheels) and try again.']
    : missing
      ? [`Could not install ${what}: the package index has no release of it (or of what it needs) for this Python, or could not be reached`,
        'If it needs a newer Python, set symposium.python to one; if you are offline, connect and try again.']
      : noPip
        ? [`Could not install ${what}: this Python's venvs have no pip`,
          'Install pip for that Python (on Debian and Ubuntu: apt install python3-venv python3-pip), install uv, or set symposium.python to another Python.']
        : [`Could not install ${what}`, 'See the Symposium log for pip\'s output.'];
  throw new SetupError(message, fix, tail(done));
}

/** The lock the vsix carries beside the backend's wheel (`backend/requirements.txt`, from `make lock`):
 * every dependency at one version, with the sha256 of each of its files. */
export const LOCK = 'requirements.txt';

export function lockBeside(wheel: string): string {
  return path.join(path.dirname(wheel), LOCK);
}

/** The locked wheels a per-platform vsix carries beside the backend's (`backend/wheels/`), if it does. */
export function wheelsBeside(wheel: string): string | undefined {
  const folder = path.join(path.dirname(wheel), 'wheels');
  return fs.existsSync(folder) ? folder : undefined;
}

/** What the private venv installs, in two steps: the lock, each file checked against its hashes and
 * never an sdist (no package's code runs to install it), then the wheel alone, its ranges unused
 * (docs/reliability.md, "What the extension installs"). A per-platform vsix carries the lock's wheels:
 * they are installed from there, no package index asked. */
export function installSteps(wheel: string): { what: string; args: string[] }[] {
  const wheels = wheelsBeside(wheel);
  return [
    { what: 'the Symposium backend', args: ['--require-hashes', '--only-binary', ':all:', ...(wheels ? ['--no-index', '--find-links', wheels] : []), '-r', lockBeside(wheel)] },
    { what: 'the Symposium backend', args: ['--no-deps', wheel] },
  ];
}

/** Packages PyPI has no wheel of for this platform (a per-platform vsix lists them in `wheels/MISSING`). */
export function missingWheels(wheel: string): string[] {
  const wheels = wheelsBeside(wheel);
  try {
    return wheels ? fs.readFileSync(path.join(wheels, 'MISSING'), 'utf8').split(/\s+/).filter(Boolean) : [];
  } catch {
    return [];
  }
}

/** The user's uv variables that say only where uv downloads from (a mirror, an index, a proxy's
 * certificates), or forbid downloading: kept. Every other UV_ one (UV_PYTHON, UV_CONFIG_FILE,
 * UV_PROJECT_ENVIRONMENT, UV_PYTHON_INSTALL_DIR, UV_CACHE_DIR, ...) would choose an interpreter, a
 * configuration or a folder for it. */
export const UV_KEPT = new Set([
  'UV_PYTHON_INSTALL_MIRROR', 'UV_PYTHON_DOWNLOADS_JSON_URL', 'UV_PYTHON_DOWNLOADS', 'UV_INDEX_URL', 'UV_EXTRA_INDEX_URL',
  'UV_DEFAULT_INDEX', 'UV_INDEX', 'UV_FIND_LINKS', 'UV_NO_INDEX', 'UV_NATIVE_TLS', 'UV_OFFLINE', 'UV_HTTP_TIMEOUT',
]);

/** Whether a variable of the extension host's would point uv, or a Python it runs, at an interpreter,
 * an environment or code it was not given: an active venv or conda environment, PYTHONPATH and the like,
 * a UV_ setting other than those kept (`UV_KEPT`). */
function steersUv(name: string): boolean {
  const upper = name.toUpperCase();
  return upper.startsWith('UV_') ? !UV_KEPT.has(upper) : upper === 'VIRTUAL_ENV' || upper.startsWith('CONDA_') || upper.startsWith('PYTHON');
}

/** uv's environment: the extension host's, less what would steer it (`steersUv`), with its cache and
 * its Pythons in `storage`. uv reads its own variables, not pip's: the package index a user chose with
 * pip's (PIP_INDEX_URL and the like) reaches uv as the UV_ one they did not set themselves. pip's
 * configuration files uv cannot read. */
export function uvEnv(env: NodeJS.ProcessEnv, storage: string): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(env).filter(([name]) => !steersUv(name)));
  const pairs: [string, string, (value: string) => string][] = [
    ['PIP_INDEX_URL', 'UV_INDEX_URL', (v) => v],
    ['PIP_EXTRA_INDEX_URL', 'UV_EXTRA_INDEX_URL', (v) => v],
    ['PIP_FIND_LINKS', 'UV_FIND_LINKS', (v) => v.trim().split(/\s+/).join(',')], // uv's is comma-separated
    ['PIP_NO_INDEX', 'UV_NO_INDEX', (v) => (/^(1|true|yes|on)$/i.test(v.trim()) ? 'true' : 'false')],
  ];
  for (const [pip, uv, convert] of pairs) {
    const value = env[pip];
    if (value?.trim() && out[uv] === undefined) {
      out[uv] = convert(value);
    }
  }
  out.UV_CACHE_DIR = path.join(storage, 'uv-cache');
  out.UV_PYTHON_INSTALL_DIR = pythonsFolder(storage);
  return out;
}

export interface BackendVenvOptions {
  storage: string; // the extension's global storage folder
  wheel: string; // the backend wheel the vsix carries, the lock (requirements.txt) beside it
  extensionVersion: string;
  pythonSetting: string;
  env?: NodeJS.ProcessEnv;
  log: Log;
  /** Called when the one-time setup starts (not when the venv is already there). */
  onSetup?: () => void;
  /** What the setup is doing now, for its progress notification. */
  progress?: (message: string) => void;
  /** The uv the vsix carries (`runtimes.ts`), used for the venv and its installs. */
  uv?: string;
  /** A Python for `request` when none is found on this machine (uv's, `runtimes.ts`); absent: none is provisioned. */
  provision?: (request: string) => Promise<Python>;
}

interface Stamp {
  extensionVersion: string;
  wheel: string;
  sha256: string; // of the wheel and the lock beside it
  python: string;
}

/** The stamp the venv must carry: the extension's version and the exact wheel and lock it was built from. */
export function stampFor(wheel: string, extensionVersion: string): Omit<Stamp, 'python'> {
  const hash = crypto.createHash('sha256').update(fs.readFileSync(wheel));
  try {
    hash.update(fs.readFileSync(lockBeside(wheel)));
  } catch {
    // no lock: the install refuses, so the stamp never matches one built with it
  }
  return { extensionVersion, wheel: path.basename(wheel), sha256: hash.digest('hex') };
}

function readStamp(venv: string): Stamp | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(venv, STAMP), 'utf8')) as Stamp;
  } catch {
    return undefined;
  }
}

/**
 * The backend's command line (without `vscodelm`) from the private venv `<storage>/venv`, built first
 * when it is missing or was built by another version of the extension. The venv is built beside it
 * and renamed into place when complete (so a half-done one is never used), and run as
 * `<venv>/bin/python -m symposium`, which does not depend on where it was built.
 */
export async function ensureBackendVenv(options: BackendVenvOptions): Promise<string[]> {
  const { storage, wheel, log } = options;
  const env = options.env ?? process.env;
  const venv = path.join(storage, 'venv');
  await removeAbandoned(storage, log);
  const wanted = stampFor(wheel, options.extensionVersion);
  const current = readStamp(venv);
  // A Python named in the setting that is not the venv's own: the user wants the venv rebuilt with it.
  const chosen = options.pythonSetting.trim() ? await probePython(options.pythonSetting.trim(), env) : undefined;
  const samePython = !chosen || chosen.path === current?.python;
  if (current && current.sha256 === wanted.sha256 && current.extensionVersion === wanted.extensionVersion && samePython && fs.existsSync(venvPython(venv))) {
    return backendArgv(venv);
  }
  options.onSetup?.();
  if (!fs.existsSync(lockBeside(wheel))) {
    throw new SetupError(
      `This Symposium package is incomplete: it has no ${LOCK} beside ${path.basename(wheel)}, so what the backend needs cannot be installed as it was tested`,
      'Reinstall the Symposium extension (or build it with `make vsix`).',
    );
  }
  log.info(
    !current ? `creating the backend venv in ${venv}`
    : !samePython ? `the backend venv was built with ${current.python}; rebuilding it with ${chosen?.path} (symposium.python)`
    : `the backend venv is from ${current.extensionVersion} (${current.wheel}); rebuilding it`,
  );
  const missing = missingWheels(wheel);
  if (missing.length) {
    throw new SetupError(
      `Symposium's backend cannot be installed on this platform: PyPI has no wheel of ${missing.join(', ')} for it, and Symposium never builds one from source`,
      'See docs/development.md, "Packages per platform", for the platforms it supports.',
    );
  }
  const python = await findPython(options.pythonSetting, env).catch((error: unknown) => {
    // Only when the user named no Python: a Python they named that does not do is theirs to change.
    if (!options.provision || options.pythonSetting.trim() || !(error instanceof SetupError)) {
      throw error;
    }
    log.info(`${error.message}: provisioning one with uv`);
    options.progress?.(`no Python ${PYTHON_REQUEST.slice(2)} or later found: downloading one into the extension's storage…`);
    return options.provision(PYTHON_REQUEST);
  });
  log.info(`using Python ${python.version} at ${python.path}`);
  options.progress?.(`a Python venv in the extension's storage, with the backend this version carries (Python ${python.version})…`);
  fs.mkdirSync(storage, { recursive: true, mode: 0o700 });
  const building = fs.mkdtempSync(path.join(storage, `venv.${buildingTag()}`));
  try {
    await createVenv(building, python, env, log, storage, options.uv);
    // The lock's packages come from the wheels the vsix carries, else the index (the user's, if they set one:
    // the same files, the same hashes); the wheel is local.
    for (const step of installSteps(wheel)) {
      await pipInstall(building, step.args, step.what, env, log, storage, options.uv);
    }
    const check = await run(venvPython(building), [...ISOLATED, '-m', 'symposium', '--help'], { env, cwd: storage, timeoutMs: 60_000 });
    if (check.code !== 0) {
      throw new SetupError('The Symposium backend was installed but does not run', 'See the Symposium log; setting symposium.python to another Python may help.', tail(check));
    }
    fs.writeFileSync(path.join(building, STAMP), JSON.stringify({ ...wanted, python: python.path }, null, 2), { mode: 0o600 });
    const old = `${venv}.old-${process.pid}-${Date.now()}`;
    if (fs.existsSync(venv)) {
      fs.renameSync(venv, old);
    }
    fs.renameSync(building, venv);
    fs.rmSync(old, { recursive: true, force: true });
  } catch (error) {
    fs.rmSync(building, { recursive: true, force: true });
    const won = readStamp(venv); // another window may have built it meanwhile
    if (won?.sha256 === wanted.sha256 && won.extensionVersion === wanted.extensionVersion) {
      return backendArgv(venv);
    }
    throw error;
  }
  log.info(`the backend venv is ready: ${venv}`);
  return backendArgv(venv);
}

/** The name part of a folder being built (`building-<pid>-`, for mkdtemp): whose it is, so another
 * window can tell one still being built from one whose builder is gone. */
export function buildingTag(): string {
  return `building-${process.pid}-`;
}

/** Folders older than this whose builder cannot be told (an earlier version named them without it). */
const UNOWNED_AGE_MS = 60 * 60_000;

/**
 * Removes what a build interrupted by a crash, a kill or a closed window left in `folder` (a
 * `*.building-<pid>-*` or `*.old-<pid>-*` folder whose process is gone): otherwise each one stays
 * forever, a venv's worth of disk. Another window's build in progress is left alone.
 */
export async function removeAbandoned(folder: string, log: Log): Promise<void> {
  let names: string[] = [];
  try {
    names = fs.readdirSync(folder);
  } catch {
    return;
  }
  for (const name of names) {
    // Only ours: `venv.…`, and the agent installs' hidden `.<id>@<version>.…` (installed ones never start with a dot).
    const match = /^(?:venv|\..+)\.(?:building|old)-(?:(\d+)-)?/.exec(name);
    if (!match) {
      continue;
    }
    const full = path.join(folder, name);
    const abandoned = match[1] !== undefined ? !alive(Number(match[1])) : ageMs(full) > UNOWNED_AGE_MS;
    if (abandoned) {
      log.info(`removing ${full}, left by an interrupted build`);
      await fs.promises.rm(full, { recursive: true, force: true }); // a venv's worth of files: not on the extension host's thread
    }
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0); // signal 0: only asks whether it exists
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'; // someone else's, but there
  }
}

function ageMs(file: string): number {
  try {
    return Date.now() - fs.statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

/** The wheel the vsix carries (`backend/symposium-*.whl`), if this build carries one. */
export function bundledWheel(extensionPath: string): string | undefined {
  const folder = path.join(extensionPath, 'backend');
  try {
    const wheels = fs.readdirSync(folder).filter((f) => /^symposium-.*\.whl$/.test(f)).sort();
    return wheels.length ? path.join(folder, wheels[wheels.length - 1]) : undefined;
  } catch {
    return undefined;
  }
}

function tail(done: Run, lines = 12): string {
  return `${done.stderr}\n${done.stdout}`.trim().split(/\r?\n/).slice(-lines).join('\n');
}
