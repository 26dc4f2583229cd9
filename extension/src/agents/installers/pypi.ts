// PyPI agents: a venv of their own, built in place, with a Python the package's `requires-python`
// accepts (Symposium's, another on PATH, or one uv provisions), then the package's executable as uvx
// would pick it. No `vscode` import, so the unit tests run it in plain node.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { CatalogueAgent } from '../registry';
import { findOnPath } from '../../config';
import { absolutePath, createVenv, ISOLATED, pipInstall, probePython, Python, run, SetupError, venvPython } from '../../setup';
import { Installed, Installer, InstallOptions } from './common';

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
 * PATH it accepts, else one uv provisions into the extension's storage (the uv the vsix carries,
 * `runtimes.ts`), else a message naming the version it needs.
 */
async function pythonFor(agent: CatalogueAgent, name: string, version: string | undefined, options: InstallOptions): Promise<Python> {
  const python = await options.python();
  const spec = version && options.requiresPython ? await options.requiresPython(name, version) : undefined;
  if (!spec || pythonSatisfies(spec, python.version)) {
    return python;
  }
  const env = options.env ?? process.env;
  const seen: Python[] = [python];
  for (const candidate of PYTHON_NAMES) {
    const onPath = findOnPath(candidate, absolutePath(env.PATH ?? ''));
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
  if (options.provision) {
    options.log.info(`${agent.name} needs Python ${spec}, and this machine has ${seen.map((p) => p.version).join(', ')}: provisioning one with uv`);
    return options.provision(spec);
  }
  throw new SetupError(
    `${agent.name} ${version} needs Python ${spec}; this machine has ${seen.map((p) => `${p.version} (${p.path})`).join(', ')}`,
    `Install a Python it accepts (or a Symposium package for your platform, which carries uv to fetch one), or set symposium.python to one, then add the agent again.`,
  );
}

async function install(agent: CatalogueAgent, _building: string, folder: string, options: InstallOptions): Promise<Installed> {
  const dist = agent.distribution.uvx!;
  const env = options.env ?? process.env;
  const { requirement, name } = pipRequirement(dist.package);
  const pinned = /==([^=,;\s]+)$/.exec(requirement)?.[1];
  const python = await pythonFor(agent, name, pinned, options);
  fs.rmSync(folder, { recursive: true, force: true });
  fs.mkdirSync(folder, { mode: 0o700 });
  const venv = path.join(folder, 'venv');
  try {
    const storage = path.dirname(options.root);
    await createVenv(venv, python, env, options.log, storage, options.uv);
    try {
      await pipInstall(venv, [requirement], agent.name, env, options.log, storage, options.uv);
    } catch (error) {
      // PyPI's requires-python could not be read beforehand (another index, say): pip's refusal names it.
      const spec = error instanceof SetupError && pinned ? requiredPython(error.detail, pinned) : undefined;
      throw spec && error instanceof SetupError
        ? new SetupError(`${agent.name} ${pinned} needs Python ${spec}; it was installed with ${python.version} (${python.path})`, 'Install a Python it accepts, or set symposium.python to one, then add the agent again.', error.detail)
        : error;
    }
    const listed = await run(venvPython(venv), [...ISOLATED, '-c', SCRIPTS, name], { env, cwd: storage });
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

export const pypiInstaller: Installer = { install, inPlace: true };
