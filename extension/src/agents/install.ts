// Installs a catalogue agent, pinned, under the extension's global storage (`<root>/<id>@<version>`):
// an npm package with `npm install --prefix` (install scripts not run unless the catalogue's
// overrides list the package, with why; run with `node` on its bin script, never through npx), a
// PyPI package into a venv of its own with a Python its `requires-python` accepts (uv when present),
// or this platform's binary archive (its sha256 recorded, and checked against the registry's or the
// one our catalogue build recorded; `verified` says which, or that neither was there). What was
// installed is recorded beside it in `symposium-install.json` (docs/usage.md, "Adding an agent").
// No `vscode` import, so the unit tests run it in plain node.
//
// A catalogue entry is trusted to name a package, not to do anything it likes to this machine: the
// download and what it unpacks to are bounded (`LIMITS`), archives are unpacked only with Python's
// tar safety filter, and the command must lie inside the install folder.

import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Log } from '../backend';
import { BinaryTarget, CatalogueAgent, checkSha256, installMethod, Method, npmName, platformKey } from './registry';
import { AgentSetting, findOnPath } from '../config';
import { buildingTag, createVenv, pipInstall, probePython, Python, removeAbandoned, run, Run, SetupError, venvPython } from '../setup';
import { AuthMethod } from '../wire';

export const RECORD = 'symposium-install.json';

/** What was installed, kept beside it. */
export interface InstallRecord {
  id: string;
  name: string;
  version: string;
  method: Method;
  source: string; // the npm / PyPI package spec, or the archive's URL
  sha256?: string; // of the archive (binary installs)
  /** What the archive's sha256 was checked against (binary installs): `unverified` when the catalogue had no hash. */
  verified?: 'registry' | 'recorded' | 'unverified';
  /** Whether npm ran the package's install scripts (npm installs). */
  installScripts?: boolean;
  command: string;
  args: string[];
  env: Record<string, string>;
  folder: string;
  installedAt: string;
  /** What the agent said when it was first started after install. */
  auth?: { ready: boolean; methods: AuthMethod[]; error?: string };
}

/** How big an install may be. The ratio bound catches a small archive that unpacks to a huge one
 * (a real binary compresses 2-5 times); the absolute ones, a huge download. */
export interface InstallLimits {
  downloadBytes: number;
  unpackedBytes: number;
  /** Unpacked bytes allowed per downloaded byte, above `unpackedBytes`' first `RATIO_FLOOR`. */
  ratio: number;
  entries: number; // files and folders in one archive
}

export const LIMITS: InstallLimits = { downloadBytes: 512 * 1024 * 1024, unpackedBytes: 2 * 1024 * 1024 * 1024, ratio: 20, entries: 100_000 };
/** Any archive may unpack to this much whatever its size (a small script with its data, say). */
const RATIO_FLOOR = 64 * 1024 * 1024;

/** The most an archive of `downloaded` bytes may unpack to. */
export function unpackedLimit(downloaded: number, limits: InstallLimits = LIMITS): number {
  return Math.min(limits.unpackedBytes, RATIO_FLOOR + limits.ratio * downloaded);
}

export interface InstallOptions {
  root: string; // <global storage>/agents
  /** The Python to build venvs and unpack archives with (found on demand). */
  python: () => Promise<Python>;
  /** What a PyPI package says it needs (`requires-python`), if it can be read; absent: not asked. */
  requiresPython?: (name: string, version: string) => Promise<string | undefined>;
  env?: NodeJS.ProcessEnv;
  log: Log;
  platform?: string;
  limits?: InstallLimits;
}

/** Installs `agent` and returns its record; the `symposium.agents` entry is `settingFor(record)`. */
export async function installAgent(agent: CatalogueAgent, options: InstallOptions): Promise<InstallRecord> {
  const method = installMethod(agent, options.platform ?? platformKey());
  if (!method) {
    const platforms = Object.keys(agent.distribution.binary ?? {}).join(', ');
    throw new SetupError(`${agent.name} has no build for ${options.platform ?? platformKey()} (only ${platforms})`, 'Pick another agent.');
  }
  fs.mkdirSync(options.root, { recursive: true, mode: 0o700 });
  await removeAbandoned(options.root, options.log);
  const folder = path.join(options.root, `${agent.id}@${agent.version}`);
  const building = fs.mkdtempSync(path.join(options.root, `.${agent.id}@${agent.version}.${buildingTag()}`));
  try {
    const installed =
      method === 'npx' ? await installNpm(agent, building, folder, options)
      : method === 'uvx' ? await installPypi(agent, building, folder, options)
      : await installBinary(agent, agent.distribution.binary![options.platform ?? platformKey()], building, folder, options);
    const record: InstallRecord = {
      id: agent.id,
      name: agent.name,
      version: agent.version,
      method,
      folder,
      installedAt: new Date().toISOString(),
      ...installed,
    };
    // npm prefixes and unpacked archives do not mind being moved; a venv is built in place.
    fs.writeFileSync(path.join(method === 'uvx' ? folder : building, RECORD), JSON.stringify(record, null, 2), { mode: 0o600 });
    if (method !== 'uvx') {
      fs.rmSync(folder, { recursive: true, force: true });
      fs.renameSync(building, folder);
    }
    options.log.info(`installed ${agent.name} ${agent.version} (${method}) in ${folder}: ${[record.command, ...record.args].join(' ')}`);
    return record;
  } finally {
    fs.rmSync(building, { recursive: true, force: true });
  }
}

/** The `symposium.agents` entry that runs the installed agent. */
export function settingFor(record: InstallRecord, id = record.id): AgentSetting {
  return { id, name: record.name, command: record.command, args: record.args, env: record.env };
}

/** The records of everything installed under `root`, by folder. */
export function readRecords(root: string): InstallRecord[] {
  let names: string[] = [];
  try {
    names = fs.readdirSync(root);
  } catch {
    return [];
  }
  const records: InstallRecord[] = [];
  for (const name of names) {
    try {
      records.push(JSON.parse(fs.readFileSync(path.join(root, name, RECORD), 'utf8')) as InstallRecord);
    } catch {
      // not an install of ours, or an unfinished one
    }
  }
  return records;
}

/** The record of the install a `symposium.agents` entry runs, if it runs one of ours. */
export function recordOf(setting: AgentSetting, records: InstallRecord[]): InstallRecord | undefined {
  return records.find((r) => r.command === setting.command && (r.args[0] ?? '') === (setting.args?.[0] ?? ''));
}

export function saveRecord(record: InstallRecord): void {
  const file = path.join(record.folder, RECORD);
  fs.writeFileSync(`${file}.tmp`, JSON.stringify(record, null, 2), { mode: 0o600 });
  fs.renameSync(`${file}.tmp`, file);
}

// npm --------------------------------------------------------------------------------------------

type Installed = Pick<InstallRecord, 'source' | 'sha256' | 'verified' | 'installScripts' | 'command' | 'args' | 'env'>;

/**
 * Runs npm (`npm`: how `npmCommand` says to start it on this platform) with `args`: the one place npm
 * is started. Never throws for a non-zero exit.
 */
export function runNpm(npm: string[], args: string[], env: NodeJS.ProcessEnv, timeoutMs = 10 * 60_000): Promise<Run> {
  return run(npm[0], [...npm.slice(1), ...args], { env, timeoutMs });
}

/** Why an `npm install` failed, read from its output (npm's own error codes). */
export type NpmFailure =
  | { kind: 'missing-version'; spec: string } // ETARGET: the package exists, that version does not
  | { kind: 'missing-package'; spec: string } // E404
  | { kind: 'install-script'; path: string; command: string } // a lifecycle script exited non-zero
  | { kind: 'offline' }
  | { kind: 'other' };

export function classifyNpmFailure(output: string): NpmFailure {
  const line = (pattern: RegExp) => pattern.exec(output)?.[1]?.trim();
  // A failing install script first: its own output may say ENOTFOUND about its own download host.
  const command = line(/^npm (?:error|ERR!) command (?!failed)(.+)$/m);
  if (/^npm (?:error|ERR!) command failed/m.test(output) || (command && /^npm (?:error|ERR!) code (?:\d+|ELIFECYCLE)$/m.test(output))) {
    return { kind: 'install-script', path: line(/^npm (?:error|ERR!) path (.+)$/m) ?? '', command: command ?? '' };
  }
  if (/^npm (?:error|ERR!) code ETARGET/m.test(output)) {
    return { kind: 'missing-version', spec: line(/No matching version found for (.+?)\.?$/m) ?? '' };
  }
  if (/^npm (?:error|ERR!) code E404/m.test(output)) {
    return { kind: 'missing-package', spec: line(/The requested resource '(.+?)' could not be found/m) ?? line(/404 Not Found - GET (\S+)/m) ?? '' };
  }
  if (/ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|ECONNRESET|network/i.test(output)) {
    return { kind: 'offline' };
  }
  return { kind: 'other' };
}

/** A version the npm registry lacks: `newest` is the one it has (its `latest`), when it said. */
export class VersionMissing extends SetupError {
  constructor(message: string, fix: string, detail: string, readonly newest?: string) {
    super(message, fix, detail);
  }
}

/** `agent` pinned to `version` of its npm package (to offer the version that exists). */
export function withNpmVersion(agent: CatalogueAgent, version: string): CatalogueAgent {
  const npx = agent.distribution.npx!;
  return { ...agent, version, distribution: { ...agent.distribution, npx: { ...npx, package: `${npmName(npx.package)}@${version}` } } };
}

async function installNpm(agent: CatalogueAgent, building: string, folder: string, options: InstallOptions): Promise<Installed> {
  const dist = agent.distribution.npx!;
  const env = options.env ?? process.env;
  const windows = (options.platform ?? platformKey()).startsWith('windows-'); // only Windows runs npm differently
  const { node, npm } = npmCommand(env, windows ? 'win32' : 'linux');
  if (!npm || !node) {
    throw new SetupError(`${agent.name} is an npm package: installing and running it needs Node.js, and there is no ${npm ? 'node' : 'npm'} on PATH`, 'Install Node.js 20 or later, then add the agent again.');
  }
  // Install scripts run only for packages that need them (catalogue/overrides.json, `npmScripts`).
  const scripts = Boolean(agent.installScripts);
  const args = ['install', '--prefix', building, '--no-audit', '--no-fund', '--loglevel=error', '--omit=dev', ...(scripts ? [] : ['--ignore-scripts']), dist.package];
  options.log.info(`installing ${agent.name}: ${[...npm, ...args].join(' ')}${scripts ? ` (its install scripts run: ${agent.installScripts})` : ''}`);
  const done = await runNpm(npm, args, env);
  if (done.code !== 0) {
    const output = `${done.stderr}\n${done.stdout}`;
    const detail = output.trim().split(/\r?\n/).slice(-12).join('\n');
    const failure = classifyNpmFailure(output);
    const name = npmName(dist.package);
    switch (failure.kind) {
      case 'missing-version': {
        const latest = await runNpm(npm, ['view', name, 'version'], env, 60_000);
        const newest = latest.code === 0 ? latest.stdout.trim().split(/\r?\n/).pop() : undefined;
        const wanted = dist.package.slice(name.length + 1) || agent.version;
        throw new VersionMissing(
          `the npm registry has no version ${wanted} of ${name}${newest ? `; the newest it has is ${newest}` : ''}`,
          newest ? `Install ${newest} instead, or try again when the registry has ${wanted}.` : 'Try again later, or report it to the catalogue\'s maintainers.',
          detail,
          newest,
        );
      }
      case 'missing-package':
        throw new SetupError(`the npm registry has no package ${name}`, 'Check your npm registry (npm config get registry), or report it to the catalogue\'s maintainers.', detail);
      case 'install-script':
        throw new SetupError(
          `the install script of ${path.basename(failure.path) || name} failed${failure.command ? ` (${failure.command})` : ''}`,
          'Its output is in the Symposium log; it may need a network host of its own, or a tool this machine lacks.',
          detail,
        );
      case 'offline':
        throw new SetupError(`npm could not install ${dist.package}: the npm registry could not be reached (offline?)`, 'Connect to the network (or configure an npm mirror) and add the agent again.', detail);
      default:
        throw new SetupError(`npm could not install ${dist.package}`, 'See the Symposium log for npm\'s output.', detail);
    }
  }
  // The package's name from what npm recorded (the spec may be a tarball or a URL).
  const manifest = JSON.parse(fs.readFileSync(path.join(building, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
  const names = Object.keys(manifest.dependencies ?? {});
  if (names.length !== 1) {
    throw new SetupError(`npm installed ${names.length} packages for ${dist.package}; expected one`, 'Report this to the catalogue\'s maintainers.');
  }
  const bin = binScript(path.join(building, 'node_modules', names[0]), names[0], building);
  return { source: dist.package, command: node, args: [path.join(folder, 'node_modules', names[0], bin), ...(dist.args ?? [])], env: dist.env ?? {}, installScripts: scripts };
}

/**
 * Node, and how npm is run: on Windows as `node.exe <npm's npm-cli.js>` (beside the `npm.cmd` on
 * PATH, as that shim runs it): Node refuses to spawn `npm.cmd` without a shell, and a shell would
 * read the arguments as commands. Elsewhere the `npm` script on PATH.
 */
export function npmCommand(env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): { node?: string; npm?: string[] } {
  const PATH = env.PATH ?? Object.entries(env).find(([name]) => name.toUpperCase() === 'PATH')?.[1] ?? '';
  const pathext = env.PATHEXT ?? '';
  const node = findOnPath('node', PATH, platform, pathext);
  if (platform !== 'win32') {
    const npm = findOnPath('npm', PATH, platform);
    return { node, npm: npm ? [npm] : undefined };
  }
  const shim = findOnPath('npm.cmd', PATH, platform, pathext);
  const cli = [shim, node]
    .filter((found): found is string => found !== undefined)
    .map((found) => path.join(path.dirname(found), 'node_modules', 'npm', 'bin', 'npm-cli.js'))
    .find((file) => fs.existsSync(file));
  return { node, npm: node && cli ? [node, cli] : undefined };
}

/**
 * The package's executable as npx would pick it (its only bin, or the one named as the package),
 * relative to `packageDir`, its path read as npm reads it (a leading `../` or `/` stays in the
 * package: `../dist/x.js` is `dist/x.js`). It must be a file, and, symlinks followed, lie inside
 * `root` (the install folder): what the package.json says is the package's to say, and a link to
 * `~/somewhere` is not what was installed.
 */
export function binScript(packageDir: string, name: string, root: string = packageDir): string {
  const pkg = JSON.parse(fs.readFileSync(path.join(packageDir, 'package.json'), 'utf8')) as { bin?: string | Record<string, string> };
  const bins = typeof pkg.bin === 'string' ? [[name, pkg.bin]] : Object.entries(pkg.bin ?? {});
  const unscoped = name.replace(/^@[^/]+\//, '');
  const chosen = bins.length === 1 ? bins[0] : bins.find(([key]) => key === unscoped);
  if (!chosen || typeof chosen[1] !== 'string') {
    throw new SetupError(`${name} has ${bins.length ? `several executables (${bins.map(([k]) => k).join(', ')}) and none named ${unscoped}` : 'no executable'}`, 'Add it by hand with Manage Agents.');
  }
  const script = chosen[1];
  const normalised = path.posix.join('/', script.replace(/\\/g, '/')).slice(1); // as npm-normalize-package-bin does
  let real: string | undefined;
  try {
    real = fs.realpathSync(path.resolve(packageDir, normalised));
  } catch {
    // not there: said below
  }
  if (!real || !inside(real, fs.realpathSync(root)) || !fs.statSync(real).isFile()) {
    throw new SetupError(
      `${name}'s executable ${JSON.stringify(script)} is ${real ? 'not a file inside its install folder' : 'not in the package'}; it was not installed`,
      'Report this to the package\'s maintainers, or add the agent by hand with Manage Agents.',
    );
  }
  return normalised;
}

const mebibytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

/** Whether `file` (resolved) lies strictly inside `folder` (resolved). */
function inside(file: string, folder: string): boolean {
  const relative = path.relative(folder, file);
  return relative !== '' && relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative);
}

// PyPI -------------------------------------------------------------------------------------------

/** A uvx package spec as a pip requirement: `name@1.2.3` → `name==1.2.3`; paths and URLs as they are. */
export function pipRequirement(spec: string): { requirement: string; name: string } {
  if (/^(https?:|file:|\/|\.)/.test(spec) || /\.(whl|tar\.gz|zip)$/.test(spec)) {
    const file = path.basename(spec.split(/[?#]/)[0]);
    const name = file.endsWith('.whl') ? file.split('-')[0] : file.replace(/-[^-]*$/, '');
    return { requirement: spec, name };
  }
  const at = /^([A-Za-z0-9][A-Za-z0-9._-]*(?:\[[^\]]*\])?)@([^@\s]+)$/.exec(spec);
  if (at) {
    return { requirement: `${at[1]}==${at[2]}`, name: at[1].replace(/\[.*\]$/, '') };
  }
  return { requirement: spec, name: /^[A-Za-z0-9][A-Za-z0-9._-]*/.exec(spec)?.[0] ?? spec };
}

const normalise = (name: string) => name.toLowerCase().replace(/[-_.]+/g, '-');

const SCRIPTS = `
import importlib.metadata as m, json, re, sys
want = re.sub(r"[-_.]+", "-", sys.argv[1]).lower()
for d in m.distributions():
    if re.sub(r"[-_.]+", "-", d.metadata["Name"] or "").lower() == want:
        print(json.dumps([e.name for e in d.entry_points if e.group == "console_scripts"]))
        break
else:
    print("null")
`;

/** Whether Python `version` (`3.12.4`) meets a `requires-python` specifier set (PEP 440: `>=3.12,<3.16`,
 * `~=3.11`, `==3.12.*`, `!=3.13.0`); an operator we do not read is taken as met (pip has the last word). */
export function pythonSatisfies(spec: string, version: string): boolean {
  const parts = (v: string) => v.split('.').map((p) => Number(p) || 0);
  const cmp = (a: number[], b: number[]) => {
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      if ((a[i] ?? 0) !== (b[i] ?? 0)) {
        return (a[i] ?? 0) < (b[i] ?? 0) ? -1 : 1;
      }
    }
    return 0;
  };
  const have = parts(version);
  return spec.split(',').map((c) => c.trim()).filter(Boolean).every((clause) => {
    const m = /^(~=|==|!=|<=|>=|<|>|===)\s*([0-9][0-9.]*)(\.\*)?$/.exec(clause);
    if (!m) {
      return true;
    }
    const [, op, raw, star] = m;
    const want = parts(raw);
    if (star) {
      const same = cmp(have.slice(0, want.length), want) === 0;
      return op === '!=' ? !same : op === '==' ? same : true;
    }
    const order = cmp(have, want);
    switch (op) {
      case '>=': return order >= 0;
      case '<=': return order <= 0;
      case '>': return order > 0;
      case '<': return order < 0;
      case '==': case '===': return order === 0;
      case '!=': return order !== 0;
      case '~=': return order >= 0 && cmp(have.slice(0, want.length - 1), want.slice(0, -1)) === 0;
      default: return true;
    }
  });
}

/** The newest of `candidates` that `spec` accepts. */
export function choosePython(spec: string, candidates: Python[]): Python | undefined {
  return candidates
    .filter((p) => pythonSatisfies(spec, p.version))
    .sort((a, b) => -a.version.localeCompare(b.version, undefined, { numeric: true }))[0];
}

/** The Python `version` of a package needs, as pip's or uv's refusal states it; undefined when it does not. */
export function requiredPython(output: string, version: string): string | undefined {
  const escaped = version.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const pip = new RegExp(`(?:^|[\\s:;])${escaped} Requires-Python ([^;\\n]+)`).exec(output)?.[1]; // "Ignored the following versions that require a different python version"
  const pipOld = /requires a different Python: [\d.]+ not in '([^']+)'/.exec(output)?.[1];
  const uv = /depends on Python([<>=!~][^\s]*?)(?:,? and |\s|$)/.exec(output)?.[1];
  return (pip ?? pipOld ?? uv)?.trim().replace(/,$/, '');
}

/** What PyPI says `name` `version` needs (`requires-python`), read from its JSON API; undefined when it cannot be read. */
export async function pypiRequiresPython(name: string, version: string): Promise<string | undefined> {
  try {
    const response = await fetch(`https://pypi.org/pypi/${encodeURIComponent(name)}/json`, { signal: AbortSignal.timeout(10_000) });
    if (!response.ok || Number(response.headers.get('content-length') ?? 0) > 32 * 1024 * 1024) {
      await response.body?.cancel();
      return undefined;
    }
    const json = (await response.json()) as { releases?: Record<string, { requires_python?: string | null }[]> };
    return json.releases?.[version]?.find((f) => f.requires_python)?.requires_python ?? undefined;
  } catch {
    return undefined;
  }
}

const PYTHON_NAMES = ['python3.14', 'python3.13', 'python3.12', 'python3.11', 'python3.10', 'python3.9', 'python3'];

/**
 * A Python for `agent`'s venv: the one Symposium uses when the package accepts it, else the newest on
 * PATH it accepts, else uv's choice (uv finds, or fetches, a Python for the specifier), else a
 * message naming the version it needs. Returns the Python, or a uv `--python` request.
 */
async function pythonFor(agent: CatalogueAgent, name: string, version: string | undefined, options: InstallOptions): Promise<Python | { uv: string; spec: string }> {
  const python = await options.python();
  const spec = version && options.requiresPython ? await options.requiresPython(name, version) : undefined;
  if (!spec || pythonSatisfies(spec, python.version)) {
    return python;
  }
  const env = options.env ?? process.env;
  const seen: Python[] = [python];
  for (const candidate of PYTHON_NAMES) {
    const onPath = findOnPath(candidate, env.PATH ?? '');
    const found = onPath ? await probePython(onPath, env) : undefined;
    if (found && !seen.some((p) => p.path === found.path)) {
      seen.push(found);
    }
  }
  const chosen = choosePython(spec, seen);
  if (chosen) {
    options.log.info(`${agent.name} needs Python ${spec}: using ${chosen.path} (${chosen.version})`);
    return chosen;
  }
  const uv = findOnPath(process.platform === 'win32' ? 'uv.exe' : 'uv', env.PATH ?? '');
  if (uv) {
    options.log.info(`${agent.name} needs Python ${spec}, and this machine has ${seen.map((p) => p.version).join(', ')}: asking uv for one`);
    return { uv, spec };
  }
  throw new SetupError(
    `${agent.name} ${version} needs Python ${spec}; this machine has ${seen.map((p) => `${p.version} (${p.path})`).join(', ')}`,
    `Install a Python it accepts (or uv, which fetches one), or set symposium.python to one, then add the agent again.`,
  );
}

async function installPypi(agent: CatalogueAgent, _building: string, folder: string, options: InstallOptions): Promise<Installed> {
  const dist = agent.distribution.uvx!;
  const env = options.env ?? process.env;
  const { requirement, name } = pipRequirement(dist.package);
  const pinned = /==([^=,;\s]+)$/.exec(requirement)?.[1];
  const python = await pythonFor(agent, name, pinned, options);
  fs.rmSync(folder, { recursive: true, force: true });
  fs.mkdirSync(folder, { mode: 0o700 });
  const venv = path.join(folder, 'venv');
  try {
    if ('uv' in python) {
      const made = await run(python.uv, ['venv', '--quiet', '--python', python.spec, venv], { env, timeoutMs: 10 * 60_000 });
      if (made.code !== 0) {
        throw new SetupError(`${agent.name} needs Python ${python.spec}, and uv could not find or fetch one`, 'Install a Python it accepts, or set symposium.python to one, then add the agent again.', made.stderr.trim());
      }
    } else {
      await createVenv(venv, python, env, options.log);
    }
    try {
      await pipInstall(venv, [requirement], agent.name, env, options.log);
    } catch (error) {
      // PyPI's requires-python could not be read beforehand (another index, say): pip's refusal names it.
      const spec = error instanceof SetupError && pinned ? requiredPython(error.detail, pinned) : undefined;
      throw spec && error instanceof SetupError && !('uv' in python)
        ? new SetupError(`${agent.name} ${pinned} needs Python ${spec}; it was installed with ${python.version} (${python.path})`, 'Install a Python it accepts (or uv, which fetches one), or set symposium.python to one, then add the agent again.', error.detail)
        : error;
    }
    const listed = await run(venvPython(venv), ['-c', SCRIPTS, name], { env });
    const scripts = JSON.parse(listed.stdout.trim() || 'null') as string[] | null;
    if (!scripts) {
      throw new SetupError(`pip installed ${requirement}, but no distribution named ${name} is in its venv`, 'Report this to the catalogue\'s maintainers.', listed.stderr);
    }
    // uvx runs the executable named as the package; else the package's only one.
    const script = scripts.find((s) => normalise(s) === normalise(name)) ?? (scripts.length === 1 ? scripts[0] : undefined);
    if (!script) {
      throw new SetupError(`${name} has ${scripts.length ? `several executables (${scripts.join(', ')}) and none named ${name}` : 'no executable'}`, 'Add it by hand with Manage Agents.');
    }
    const bin = process.platform === 'win32' ? path.join(venv, 'Scripts', `${script}.exe`) : path.join(venv, 'bin', script);
    return { source: dist.package, command: bin, args: dist.args ?? [], env: dist.env ?? {} };
  } catch (error) {
    fs.rmSync(folder, { recursive: true, force: true });
    throw error;
  }
}

// Binary archives --------------------------------------------------------------------------------

const ARCHIVE = /\.(zip|tar|tar\.gz|tgz|tar\.bz2|tbz2|tar\.xz|txz)$/i;

// Exit 3: this Python has no tar safety filter (before 3.11.4): we refuse rather than unpack without it.
// Exit 4: it is bigger than allowed (bytes or entries). Both are found before anything is written.
// Zip archives: zipfile itself drops `..` and absolute paths and makes no links.
const UNPACK = `
import sys, tarfile, zipfile
archive, target, max_bytes, max_entries = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
def refuse(code, why):
    sys.stderr.write(why + "\\n")
    sys.exit(code)
def check(sizes):
    total = count = 0
    for size in sizes:
        total, count = total + size, count + 1
        if count > max_entries:
            refuse(4, f"it has more than {max_entries:,} entries")
        if total > max_bytes:
            refuse(4, f"it unpacks to more than {max_bytes / 2**20:.1f} MiB")
if archive.lower().endswith(".zip"):
    with zipfile.ZipFile(archive) as z:
        check(i.file_size for i in z.infolist())
        z.extractall(target)
else:
    if not hasattr(tarfile, "data_filter"):
        refuse(3, f"Python {sys.version.split()[0]} has no tar extraction filter")
    with tarfile.open(archive) as t:
        check(m.size for m in t)
        t.extractall(target, filter="data")
`;

async function installBinary(agent: CatalogueAgent, target: BinaryTarget, building: string, folder: string, options: InstallOptions): Promise<Installed> {
  const file = path.basename(new URL(target.archive).pathname) || 'download';
  const download = path.join(building, `.download-${file}`);
  options.log.info(`downloading ${target.archive}`);
  let response: Response;
  try {
    response = await fetch(target.archive, { signal: AbortSignal.timeout(10 * 60_000) });
  } catch (error) {
    const reason = error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
    throw new SetupError(`Could not download ${agent.name} from ${target.archive}: ${reason}`, 'Connect to the network and add the agent again.');
  }
  if (!response.ok || !response.body) {
    throw new SetupError(`Could not download ${agent.name}: ${target.archive} answered ${response.status}`, 'Try again later, or report it to the catalogue\'s maintainers.');
  }
  const limits = options.limits ?? LIMITS;
  const tooBig = () => new SetupError(
    `The download of ${agent.name} (${target.archive}) is larger than ${mebibytes(limits.downloadBytes)}; it was not installed`,
    'Report this to the catalogue\'s maintainers.',
  );
  if (Number(response.headers.get('content-length') ?? 0) > limits.downloadBytes) {
    await response.body.cancel();
    throw tooBig();
  }
  // Counted as it arrives: a server may send more than it announced, or announce nothing.
  const hash = crypto.createHash('sha256');
  let downloaded = 0;
  const body = Readable.fromWeb(response.body as import('node:stream/web').ReadableStream);
  const counted = async function* (chunks: AsyncIterable<Buffer>) {
    for await (const chunk of chunks) {
      downloaded += chunk.length;
      if (downloaded > limits.downloadBytes) {
        throw tooBig();
      }
      hash.update(chunk);
      yield chunk;
    }
  };
  await pipeline(body, counted, fs.createWriteStream(download, { mode: 0o600 }));
  const sha256 = hash.digest('hex');
  const checked = checkSha256(target, sha256);
  if (!checked.ok) {
    throw new SetupError(
      `The download of ${agent.name} does not match the catalogue: sha256 ${sha256}, expected ${checked.expected}${checked.against === 'recorded' ? ' (recorded when Symposium\'s catalogue was built)' : ''}`,
      'Do not use it; try again later, or report it to the catalogue\'s maintainers.',
    );
  }
  if (!checked.against) {
    options.log.warn(`${agent.name}: the catalogue gives no sha256 for ${target.archive}; installed unverified (sha256 ${sha256})`);
  }
  const cmd = path.join(building, target.cmd);
  if (!path.resolve(cmd).startsWith(path.resolve(building) + path.sep)) {
    throw new SetupError(`${agent.name}'s command ${target.cmd} is outside its folder`, 'Report this to the catalogue\'s maintainers.');
  }
  if (ARCHIVE.test(file)) {
    const python = await options.python();
    const most = unpackedLimit(downloaded, limits);
    const done = await run(python.path, ['-c', UNPACK, download, building, String(most), String(limits.entries)], { env: options.env });
    if (done.code === 3) {
      throw new SetupError(
        `Could not unpack ${file}: ${done.stderr.trim()}, and Symposium never unpacks without it`,
        `Set symposium.python to Python 3.11.4 or later (it has the filter), then add the agent again.`,
      );
    }
    if (done.code === 4) {
      throw new SetupError(
        `${agent.name}'s archive ${file} was not unpacked: ${done.stderr.trim()}, more than Symposium allows for a ${mebibytes(downloaded)} download`,
        'Report this to the catalogue\'s maintainers.',
      );
    }
    if (done.code !== 0) {
      throw new SetupError(`Could not unpack ${file}`, 'Try again; the download may be damaged.', done.stderr.trim());
    }
    fs.rmSync(download);
  } else {
    fs.mkdirSync(path.dirname(cmd), { recursive: true, mode: 0o700 });
    fs.renameSync(download, cmd); // the archive is the executable itself
  }
  if (!fs.existsSync(cmd)) {
    throw new SetupError(`${file} has no ${target.cmd}`, 'Report this to the catalogue\'s maintainers.');
  }
  if (!inside(fs.realpathSync(cmd), fs.realpathSync(building))) {
    throw new SetupError(`${agent.name}'s command ${target.cmd} leads outside its folder`, 'Report this to the catalogue\'s maintainers.');
  }
  fs.chmodSync(cmd, 0o755);
  return {
    source: target.archive,
    sha256,
    verified: checked.against ?? 'unverified',
    command: path.join(folder, path.relative(building, cmd)),
    args: target.args ?? [],
    env: target.env ?? {},
  };
}
