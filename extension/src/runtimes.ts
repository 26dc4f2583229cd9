// What the vsix carries so that nothing has to be installed by the user first (docs/usage.md,
// "What Symposium needs on your machine"): `uv` (per-platform packages: `bin/uv`), which provisions a
// Python into the extension's storage when the machine has none new enough, and npm (`npm/`'s
// tarball), which installs npm agents to run on VS Code's own Node where PATH has no Node new enough. No `vscode`
// import, so the unit tests run it in plain node.

import * as fs from 'node:fs';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { Log } from './backend';
import { MIN_PYTHON, probePython, Python, pythonsFolder, runUv, SetupError } from './setup';

export { pythonsFolder };

/** What the extension at `extensionPath` carries: its uv (per-platform packages) and npm's tarball
 * (`npm/npm-<version>.tgz`: one file, so the vsix stays small in files, unpacked on first use). */
export function bundledRuntimes(extensionPath: string, platform: NodeJS.Platform = process.platform): { uv?: string; npmTarball?: string } {
  const uv = path.join(extensionPath, 'bin', platform === 'win32' ? 'uv.exe' : 'uv');
  let tarball: string | undefined;
  try {
    tarball = fs.readdirSync(path.join(extensionPath, 'npm')).filter((f) => /^npm-[\d.]+\.tgz$/.test(f)).map((f) => path.join(extensionPath, 'npm', f))[0];
  } catch {
    // a build without npm
  }
  return { uv: fs.existsSync(uv) ? uv : undefined, npmTarball: tarball };
}

/**
 * npm's CLI script from the tarball the vsix carries, unpacked once into `storage` (`npm-<version>/`,
 * built beside it and renamed into place). The tarball is npm's own from the registry, its integrity
 * checked when the vsix was built; still, no entry is written outside the folder.
 */
export function unpackNpm(tarball: string, storage: string): string {
  const target = path.join(storage, path.basename(tarball, '.tgz'));
  const cli = path.join(target, 'bin', 'npm-cli.js');
  if (fs.existsSync(cli)) {
    return cli;
  }
  fs.mkdirSync(storage, { recursive: true, mode: 0o700 });
  const building = fs.mkdtempSync(`${target}.building-${process.pid}-`);
  try {
    untar(zlib.gunzipSync(fs.readFileSync(tarball)), building, 1);
    fs.rmSync(target, { recursive: true, force: true });
    fs.renameSync(building, target);
  } finally {
    fs.rmSync(building, { recursive: true, force: true });
  }
  return cli;
}

/** Writes the regular files of a tar archive (ustar, with pax or GNU long names) under `into`, the
 * first `strip` parts of each path dropped; anything else (links, devices) is skipped. */
export function untar(data: Buffer, into: string, strip = 0): void {
  const text = (start: number, length: number) => data.toString('utf8', start, start + length).replace(/\0.*$/s, '');
  let longName: string | undefined;
  for (let at = 0; at + 512 <= data.length;) {
    if (data[at] === 0) { // the end: an empty header
      break;
    }
    const size = Number.parseInt(text(at + 124, 12).trim() || '0', 8);
    const type = String.fromCharCode(data[at + 156] || 48);
    const prefix = text(at + 257, 6).startsWith('ustar') ? text(at + 345, 155) : '';
    const name = longName ?? (prefix ? `${prefix}/${text(at, 100)}` : text(at, 100));
    const mode = Number.parseInt(text(at + 100, 8).trim() || '644', 8);
    const body = data.subarray(at + 512, at + 512 + size);
    at += 512 + Math.ceil(size / 512) * 512;
    if (type === 'x' || type === 'L') {
      longName = type === 'L' ? body.toString('utf8').replace(/\0.*$/s, '') : /(?:^|\n)\d+ path=([^\n]*)\n/.exec(body.toString('utf8'))?.[1];
      continue;
    }
    longName = undefined;
    if (type !== '0' && type !== '7') {
      continue; // folders are made as files need them; links and the rest are not in npm's tarball
    }
    const parts = name.split('/').filter((p) => p && p !== '.').slice(strip);
    if (!parts.length || parts.includes('..')) {
      continue;
    }
    const file = path.join(into, ...parts);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, body, { mode: mode & 0o111 ? 0o755 : 0o644 });
  }
}

// Node ------------------------------------------------------------------------------------------

/** VS Code's own Node: the extension host's executable, and what makes it Node where it is Electron
 * (desktop VS Code; code-server's host is plain Node). */
export interface NodeRuntime {
  node: string;
  version: string;
  env: Record<string, string>;
  /** npm's CLI script (the vsix's, unpacked on first call), run with `node`; absent in a build that carries none. */
  npmCli?: () => string;
}

export function hostNode(npmCli: (() => string) | undefined, host: { execPath: string; versions: NodeJS.ProcessVersions } = process): NodeRuntime {
  return { node: host.execPath, version: host.versions.node, env: host.versions.electron ? { ELECTRON_RUN_AS_NODE: '1' } : {}, npmCli };
}

/** Whether Node `version` (`22.9.0`, `v22.9.0`) meets an `engines.node` range (npm's semver ranges:
 * `>=20`, `^20.17.0 || >=22.9.0`, `18.x`, `~22.1`, `20 - 22`); a comparator we do not read is taken as met. */
export function nodeSatisfies(range: string, version: string): boolean {
  const have = version.replace(/^v/, '').split('.').map((p) => Number.parseInt(p, 10) || 0);
  const cmp = (a: number[], b: number[]) => {
    for (let i = 0; i < 3; i++) {
      if ((a[i] ?? 0) !== (b[i] ?? 0)) {
        return (a[i] ?? 0) < (b[i] ?? 0) ? -1 : 1;
      }
    }
    return 0;
  };
  const parse = (v: string) => v.replace(/^v/, '').split('.').filter((p) => p !== '' && !/^[x*]$/i.test(p)).map(Number);
  const comparator = (clause: string): boolean => {
    const m = /^(\^|~|>=|<=|>|<|=)?\s*v?([0-9x*][0-9a-z.*-]*)$/i.exec(clause);
    if (!m) {
      return true;
    }
    const [, op = '', raw] = m;
    const want = parse(raw.split('-')[0]);
    const exact = [want[0] ?? 0, want[1] ?? 0, want[2] ?? 0];
    const order = cmp(have, exact);
    const upper = (digits: number) => (digits === 0 ? [Infinity] : digits === 1 ? [want[0] + 1] : [want[0], want[1] + 1]);
    switch (op) {
      case '>=': return order >= 0;
      case '>': return want.length < 3 ? cmp(have, upper(want.length)) >= 0 : order > 0;
      case '<=': return want.length < 3 ? cmp(have, upper(want.length)) < 0 : order <= 0;
      case '<': return order < 0;
      case '^': {
        const bound = want[0] > 0 || want.length < 2 ? [want[0] + 1] : want[1] > 0 || want.length < 3 ? [0, want[1] + 1] : [0, 0, want[2] + 1];
        return order >= 0 && cmp(have, bound) < 0;
      }
      case '~': return order >= 0 && cmp(have, upper(Math.min(want.length, 2))) < 0;
      default: return want.length < 3 ? order >= 0 && cmp(have, upper(want.length)) < 0 : order === 0;
    }
  };
  return range.split('||').some((alternative) => {
    const text = alternative.trim();
    const hyphen = /^(\S+)\s+-\s+(\S+)$/.exec(text);
    const clauses = hyphen ? [`>=${hyphen[1]}`, `<=${hyphen[2]}`] : text.split(/\s+/).filter(Boolean);
    return clauses.every(comparator);
  });
}

// Python ----------------------------------------------------------------------------------------

/**
 * A Python meeting `request` (`>=3.11`, `>=3.12`), installed by `uv` into the extension's storage (or
 * already there from an earlier time). uv reads its own settings for where it downloads from
 * (UV_PYTHON_INSTALL_MIRROR, UV_PYTHON_DOWNLOADS_JSON_URL, HTTPS_PROXY); a failure says what was tried.
 */
export async function provisionPython(uv: string, storage: string, request: string, env: NodeJS.ProcessEnv, log: Log): Promise<Python> {
  const installDir = pythonsFolder(storage);
  fs.mkdirSync(installDir, { recursive: true, mode: 0o700 });
  // Confined (`setup.ts`, `uvCommand`): run in the storage, with no configuration, only the Pythons it
  // installs there. `--no-bin`: nothing written to the user's own bin folder.
  const install = ['python', 'install', '--no-bin', '--no-registry', request];
  log.info(`provisioning a Python ${request} with ${uv}: ${install.join(' ')} (into ${installDir})`);
  const installed = await runUv(uv, install, storage, env, 15 * 60_000);
  if (installed.code !== 0) {
    throw downloadFailure(request, env, `${installed.stderr}\n${installed.stdout}`);
  }
  // `--system`: no virtual environment is looked for (uv's discovery runs the interpreter of any `.venv`
  // in its working folder or above it, the user's `~/.venv` say), only the managed Pythons.
  const found = await runUv(uv, ['python', 'find', '--system', '--no-project', '--no-python-downloads', request], storage, env, 60_000);
  const python = found.code === 0 ? await probePython(found.stdout.trim().split(/\r?\n/).pop() ?? '', env) : undefined;
  if (!python) {
    throw new SetupError(`uv installed a Python ${request}, but it does not run`, 'See the Symposium log; set symposium.python to a Python you have.', `${found.stderr}\n${installed.stderr}`.trim());
  }
  log.info(`using Python ${python.version} at ${python.path}, provisioned by uv`);
  return python;
}

/** Where uv looked for a Python, by the settings that choose it. */
export function pythonSource(env: NodeJS.ProcessEnv): string {
  if (env.UV_PYTHON_DOWNLOADS_JSON_URL) {
    return `the downloads listed at ${env.UV_PYTHON_DOWNLOADS_JSON_URL} (UV_PYTHON_DOWNLOADS_JSON_URL)`;
  }
  if (env.UV_PYTHON_INSTALL_MIRROR) {
    return `the mirror ${env.UV_PYTHON_INSTALL_MIRROR} (UV_PYTHON_INSTALL_MIRROR)`;
  }
  return 'python-build-standalone\'s releases on GitHub (uv\'s default)';
}

function downloadFailure(request: string, env: NodeJS.ProcessEnv, output: string): SetupError {
  const proxy = env.HTTPS_PROXY ?? env.https_proxy ?? env.ALL_PROXY ?? env.all_proxy;
  const disabled = /downloads are disabled|UV_PYTHON_DOWNLOADS/i.test(output) && /never|manual/i.test(env.UV_PYTHON_DOWNLOADS ?? '');
  return new SetupError(
    `No Python ${request} was found, and uv could not download one from ${pythonSource(env)}${proxy ? `, through the proxy ${proxy} (HTTPS_PROXY)` : ''}${disabled ? '; UV_PYTHON_DOWNLOADS forbids it' : ''}`,
    'Point UV_PYTHON_INSTALL_MIRROR (or UV_PYTHON_DOWNLOADS_JSON_URL) at a mirror of python-build-standalone, set HTTPS_PROXY for a proxy, '
      + `or install Python ${MIN_PYTHON.join('.')} or later yourself and set symposium.python to it; then restart the backend.`,
    output.trim().split(/\r?\n/).slice(-12).join('\n'),
  );
}
