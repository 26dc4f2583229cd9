// The agent catalogue: the ACP registry's `registry.json` (its own format: id, name, version,
// description, distribution with npx / uvx / per-platform binary), fetched from the registry's
// published copy when the saved one is older than `REFRESH_MS` and the registry can be reached, else
// the last copy fetched (while younger than `MAX_AGE_MS`), else the copy shipped in the extension.
// Our own knowledge of agents (`catalogue/overrides.json`) is applied to whichever it is, and the
// sha256 the catalogue build recorded for binaries the registry gives none for (docs/usage.md, "The
// catalogue"). No `vscode` import, so the unit tests run it in plain node.

import * as fs from 'node:fs';
import * as path from 'node:path';

export const REGISTRY_URL = 'https://cdn.agentclientprotocol.com/registry/v1/latest/registry.json';
const FETCH_TIMEOUT_MS = 5000;
const MAX_BYTES = 8 * 1024 * 1024;
/** A saved copy younger than this is used without asking the registry. */
export const REFRESH_MS = 6 * 60 * 60 * 1000;
/** A saved copy older than this is not used: the shipped one is. */
export const MAX_AGE_MS = 30 * 24 * 60 * 60 * 1000;

export interface PackageDistribution {
  package: string; // an npm / PyPI package with its version (`@scope/name@1.2.3`, `name==1.2.3`), or a tarball / wheel URL
  args?: string[];
  env?: Record<string, string>;
}

export interface BinaryTarget {
  archive: string; // URL of an archive (zip, tar.gz, tar.bz2, tar.xz) or of the executable itself
  cmd: string; // the executable, relative to the unpacked archive
  args?: string[];
  env?: Record<string, string>;
  sha256?: string; // the registry's: checked when given
  recordedSha256?: string; // computed when our catalogue was built, for a target the registry gives none for: checked likewise
}

export interface CatalogueAgent {
  id: string;
  name: string;
  version: string;
  description: string;
  repository?: string;
  website?: string;
  authors?: string[];
  license?: string;
  icon?: string;
  distribution: { npx?: PackageDistribution; uvx?: PackageDistribution; binary?: Record<string, BinaryTarget> };
  /** Why this agent's npm install scripts are run (overrides' `npmScripts`); absent: `--ignore-scripts`. */
  installScripts?: string;
}

export interface Catalogue {
  agents: CatalogueAgent[];
  /** Where the list came from: the registry now, the copy saved when it last answered, or the shipped copy. */
  source: 'registry' | 'saved' | 'shipped';
  /** Why the registry was not used, when it was not. */
  note?: string;
}

/** The registry's platform name for this machine (`linux-x86_64`, `darwin-aarch64`, ...). */
export function platformKey(platform: string = process.platform, arch: string = process.arch): string {
  const os = platform === 'win32' ? 'windows' : platform;
  const cpu = arch === 'x64' ? 'x86_64' : arch === 'arm64' ? 'aarch64' : arch;
  return `${os}-${cpu}`;
}

const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string');
const isEnv = (v: unknown): v is Record<string, string> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((s) => typeof s === 'string');

function packageDistribution(value: unknown): PackageDistribution | undefined {
  const v = value as Partial<PackageDistribution> | undefined;
  if (!v || typeof v.package !== 'string' || !v.package || (v.args !== undefined && !isStrings(v.args)) || (v.env !== undefined && !isEnv(v.env))) {
    return undefined;
  }
  return { package: v.package, args: v.args ?? [], env: v.env ?? {} };
}

function binaryTarget(value: unknown): BinaryTarget | undefined {
  const v = value as Partial<BinaryTarget> | undefined;
  if (!v || typeof v.archive !== 'string' || typeof v.cmd !== 'string' || !v.cmd || (v.args !== undefined && !isStrings(v.args)) || (v.env !== undefined && !isEnv(v.env))) {
    return undefined;
  }
  // Kept as given when not hex: a hash that cannot match refuses the download, as a wrong one does.
  const hex = (h: unknown) => (typeof h === 'string' && h ? h.toLowerCase() : undefined);
  const sha256 = hex(v.sha256);
  const recorded = hex(v.recordedSha256);
  return { archive: v.archive, cmd: v.cmd, args: v.args ?? [], env: v.env ?? {}, ...(sha256 ? { sha256 } : {}), ...(recorded ? { recordedSha256: recorded } : {}) };
}

// What `shown` takes out of a name before VS Code shows it, by the backend's rules for what agents
// name (protocol/agent_text.py): controls and line breaks become spaces; bidi controls and
// invisible characters go (a bidi override can make `‮txt.exe` read as `exe.txt`).
const BREAKS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;
const INVISIBLE = /[\u061c\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb]|\udb40[\udc00-\udc7f]/g;
const MAX_SHOWN = 200;

/** A catalogue's text as the quick picks and the model picker show it: cleaned, at most 200 characters. */
export function shown(value: unknown): string {
  if (typeof value !== 'string') {
    return '';
  }
  const text = value.replace(BREAKS, ' ').replace(INVISIBLE, '').replace(/\s+/g, ' ').trim();
  const characters = Array.from(text); // by code point, as the backend counts: a cut never splits a pair
  return characters.length <= MAX_SHOWN ? text : `${characters.slice(0, MAX_SHOWN - 1).join('').trimEnd()}…`;
}

/**
 * The usable agents of a `registry.json`, and a complaint for each entry left out. Unknown fields
 * are ignored (the format grows); an id must be safe as a folder name; names and descriptions are
 * shown cleaned (`shown`): the catalogue is somebody else's file.
 */
export function parseRegistry(json: unknown): { agents: CatalogueAgent[]; problems: string[] } {
  const agents: CatalogueAgent[] = [];
  const problems: string[] = [];
  const list = (json as { agents?: unknown })?.agents;
  if (!Array.isArray(list)) {
    return { agents, problems: ['not an ACP registry: no "agents" list'] };
  }
  for (const [index, raw] of list.entries()) {
    const entry = raw as Partial<CatalogueAgent> & { distribution?: Record<string, unknown> };
    const where = typeof entry?.id === 'string' ? entry.id : `agents[${index}]`;
    if (!entry || typeof entry.id !== 'string' || !/^[a-z0-9][a-z0-9._-]*$/.test(entry.id) || entry.id.includes('..')) {
      problems.push(`${where}: no usable id`);
      continue;
    }
    if (!shown(entry.name) || typeof entry.version !== 'string' || !/^[0-9A-Za-z][0-9A-Za-z.+-]*$/.test(entry.version)) {
      problems.push(`${where}: needs a name and a version`);
      continue;
    }
    const dist = entry.distribution ?? {};
    const distribution: CatalogueAgent['distribution'] = {};
    const npx = packageDistribution(dist.npx);
    const uvx = packageDistribution(dist.uvx);
    if (npx) {
      distribution.npx = npx;
    }
    if (uvx) {
      distribution.uvx = uvx;
    }
    if (dist.binary && typeof dist.binary === 'object') {
      const targets: Record<string, BinaryTarget> = {};
      for (const [platform, target] of Object.entries(dist.binary as Record<string, unknown>)) {
        const parsed = binaryTarget(target);
        if (parsed) {
          targets[platform] = parsed;
        }
      }
      if (Object.keys(targets).length) {
        distribution.binary = targets;
      }
    }
    if (!distribution.npx && !distribution.uvx && !distribution.binary) {
      problems.push(`${where}: no distribution we can install`);
      continue;
    }
    agents.push({
      id: entry.id,
      name: shown(entry.name),
      version: entry.version,
      description: shown(entry.description),
      ...(typeof entry.repository === 'string' ? { repository: entry.repository } : {}),
      ...(typeof entry.website === 'string' ? { website: entry.website } : {}),
      ...(isStrings(entry.authors) ? { authors: entry.authors } : {}),
      ...(typeof entry.license === 'string' ? { license: entry.license } : {}),
      distribution,
    });
  }
  return { agents, problems };
}

export interface LoadOptions {
  url: string; // empty: do not ask the registry
  shipped: string; // the catalogue file in the extension
  saved: string; // where the last registry answer is kept
  /** Our overrides (catalogue/overrides.json); absent: none. */
  overrides?: string;
  timeoutMs?: number;
  /** Ask the registry even when the saved copy is younger than `REFRESH_MS` (the update command). */
  refresh?: boolean;
  now?: number;
  log?: { info(m: string): void; warn(m: string): void };
}

/** Fetches `url` as JSON, bounded in time and in size: the size counted as it arrives, so an
 * endless or huge answer costs at most `MAX_BYTES` of memory, never all of it. */
async function fetchJson(url: string, timeoutMs: number): Promise<unknown> {
  const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), headers: { accept: 'application/json' } });
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`${response.status} ${response.statusText}`.trim());
  }
  const tooLarge = () => new Error(`the answer is larger than ${MAX_BYTES / 1024 / 1024} MiB`);
  if (Number(response.headers.get('content-length') ?? 0) > MAX_BYTES) {
    await response.body?.cancel();
    throw tooLarge();
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = response.body!.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) {
      break;
    }
    size += value.length;
    if (size > MAX_BYTES) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(value);
  }
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

/** Our knowledge of agents where it differs from the registry's (catalogue/overrides.json). */
export interface Overrides {
  remove?: string[];
  /** Replace the registry's entry of the same id while the registry's version is not newer. */
  agents?: unknown[];
  /** Per id: `args` replacing the registry's, `env` added to it, in every distribution. */
  patch?: Record<string, { args?: string[]; env?: Record<string, string> }>;
  /** npm packages whose install scripts are run, with the reason. */
  npmScripts?: Record<string, string>;
}

/**
 * A registry's agents with our overrides applied (the build script applies the same,
 * extension/scripts/catalogue.py): as raw JSON, before `parseRegistry` checks it. An entry of
 * `agents` the registry lacks is added only with `add` (the build); at run time a registry without it
 * (a test's, or one of the user's choosing) is taken as it is.
 */
export function applyOverrides(json: unknown, overrides: Overrides, add = false): unknown {
  const list = (json as { agents?: unknown })?.agents;
  if (!Array.isArray(list)) {
    return json;
  }
  const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;
  const byId = new Map<string, Record<string, unknown>>();
  for (const raw of list) {
    const entry = raw as Record<string, unknown>;
    byId.set(typeof entry?.id === 'string' ? entry.id : `\u0000${byId.size}`, clone(entry));
  }
  for (const id of overrides.remove ?? []) {
    byId.delete(id);
  }
  for (const raw of overrides.agents ?? []) {
    const ours = raw as { id?: unknown; version?: unknown };
    if (typeof ours?.id !== 'string' || typeof ours.version !== 'string') {
      continue;
    }
    const theirs = byId.get(ours.id);
    if (theirs ? typeof theirs.version !== 'string' || compareVersions(theirs.version, ours.version) <= 0 : add) {
      byId.set(ours.id, clone(raw as Record<string, unknown>));
    }
  }
  for (const [id, patch] of Object.entries(overrides.patch ?? {})) {
    const entry = byId.get(id);
    const dist = (entry?.distribution ?? {}) as Record<string, unknown>;
    const targets = [dist.npx, dist.uvx, ...Object.values((dist.binary ?? {}) as Record<string, unknown>)];
    for (const target of targets.filter((t): t is Record<string, unknown> => typeof t === 'object' && t !== null)) {
      if (patch.args) {
        target.args = [...patch.args];
      }
      if (patch.env) {
        target.env = { ...((target.env ?? {}) as object), ...patch.env };
      }
    }
  }
  return { ...(json as object), agents: [...byId.values()] };
}

/** The npm package name of a spec (`@scope/name@1.2.3` → `@scope/name`); a URL or path as it is. */
export function npmName(spec: string): string {
  const match = /^(@[^/@\s]+\/[^@\s]+|[^@\s]+)(?:@.*)?$/.exec(spec);
  return match ? match[1] : spec;
}

/**
 * Compares two versions as semver orders them (numeric parts as numbers, a pre-release before its
 * release, build metadata ignored); versions with more or fewer than three parts (`2026.10.01`,
 * `2698.3.0`) compare part by part. Negative when `a` is older.
 */
export function compareVersions(a: string, b: string): number {
  const split = (v: string) => {
    const [core, ...pre] = v.trim().replace(/^v/i, '').split('+')[0].split('-');
    return { core: core.split('.').map((p) => (/^\d+$/.test(p) ? Number(p) : NaN)), pre: pre.join('-') };
  };
  const x = split(a);
  const y = split(b);
  for (let i = 0; i < Math.max(x.core.length, y.core.length, 3); i++) {
    const p = x.core[i] ?? 0;
    const q = y.core[i] ?? 0;
    if (Number.isNaN(p) || Number.isNaN(q)) {
      const text = String(a).localeCompare(String(b));
      return Number.isNaN(p) && Number.isNaN(q) ? text : Number.isNaN(p) ? -1 : 1;
    }
    if (p !== q) {
      return p < q ? -1 : 1;
    }
  }
  if (!x.pre || !y.pre) {
    return x.pre === y.pre ? 0 : x.pre ? -1 : 1;
  }
  const xs = x.pre.split('.');
  const ys = y.pre.split('.');
  for (let i = 0; i < Math.max(xs.length, ys.length); i++) {
    if (xs[i] === undefined || ys[i] === undefined) {
      return xs[i] === undefined ? -1 : 1;
    }
    const numeric = /^\d+$/.test(xs[i]) && /^\d+$/.test(ys[i]);
    const order = numeric ? Number(xs[i]) - Number(ys[i]) : /^\d+$/.test(xs[i]) ? -1 : /^\d+$/.test(ys[i]) ? 1 : xs[i].localeCompare(ys[i]);
    if (order !== 0) {
      return order < 0 ? -1 : 1;
    }
  }
  return 0;
}

/** The catalogue version to offer as an update of `installed`, if it is newer. */
export function updateFor(installed: { id: string; version: string }, agents: CatalogueAgent[]): CatalogueAgent | undefined {
  const latest = agents.find((a) => a.id === installed.id);
  return latest && compareVersions(latest.version, installed.version) > 0 ? latest : undefined;
}

/** What a downloaded binary's sha256 says: checked against the registry's hash, else the one our
 * build recorded; `unverified` when the catalogue has neither. */
export function checkSha256(target: Pick<BinaryTarget, 'sha256' | 'recordedSha256'>, actual: string): { ok: boolean; against?: 'registry' | 'recorded'; expected?: string } {
  const expected = target.sha256 ?? target.recordedSha256;
  if (!expected) {
    return { ok: true };
  }
  return { ok: expected.toLowerCase() === actual.toLowerCase(), against: target.sha256 ? 'registry' : 'recorded', expected: expected.toLowerCase() };
}

/** Recorded hashes of the shipped catalogue, by archive URL, for a registry that gives none. */
function recordedHashes(agents: CatalogueAgent[]): Map<string, string> {
  const hashes = new Map<string, string>();
  for (const agent of agents) {
    for (const target of Object.values(agent.distribution.binary ?? {})) {
      if (target.recordedSha256) {
        hashes.set(target.archive, target.recordedSha256);
      }
    }
  }
  return hashes;
}

function readJson(file: string): unknown {
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}

/** The catalogue to offer: the registry's (saved when fetched), else the saved copy, else the shipped one; our overrides applied. */
export async function loadCatalogue(options: LoadOptions): Promise<Catalogue> {
  let overrides: Overrides = {};
  if (options.overrides) {
    try {
      overrides = readJson(options.overrides) as Overrides;
    } catch (error) {
      options.log?.warn(`catalogue: ${options.overrides} could not be read (${error instanceof Error ? error.message : String(error)}); no overrides`);
    }
  }
  let shipped: CatalogueAgent[] = [];
  try {
    shipped = parseRegistry(applyOverrides(readJson(options.shipped), overrides)).agents;
  } catch {
    // said below if nothing else serves
  }
  const hashes = recordedHashes(shipped);
  const finish = (agents: CatalogueAgent[]): CatalogueAgent[] => agents.map((agent) => {
    const binary = agent.distribution.binary;
    const npx = agent.distribution.npx;
    const scripts = npx ? overrides.npmScripts?.[npmName(npx.package)] : undefined;
    return {
      ...agent,
      ...(scripts ? { installScripts: scripts } : {}),
      ...(binary ? {
        distribution: {
          ...agent.distribution,
          binary: Object.fromEntries(Object.entries(binary).map(([platform, target]) => [
            platform,
            target.sha256 || target.recordedSha256 || !hashes.has(target.archive) ? target : { ...target, recordedSha256: hashes.get(target.archive) },
          ])),
        },
      } : {}),
    };
  });
  const now = options.now ?? Date.now();
  const age = (file: string) => {
    try {
      return now - fs.statSync(file).mtimeMs;
    } catch {
      return Infinity;
    }
  };
  const savedAge = age(options.saved);
  let note: string | undefined;
  const fresh = savedAge < REFRESH_MS && !options.refresh;
  if (options.url && !fresh) {
    try {
      const json = await fetchJson(options.url, options.timeoutMs ?? FETCH_TIMEOUT_MS);
      const { agents, problems } = parseRegistry(applyOverrides(json, overrides));
      problems.forEach((p) => options.log?.info(`catalogue: ${p}`));
      if (!agents.length) {
        throw new Error('it lists no agent we can install');
      }
      fs.mkdirSync(path.dirname(options.saved), { recursive: true, mode: 0o700 });
      fs.writeFileSync(`${options.saved}.tmp`, JSON.stringify(json), { mode: 0o600 });
      fs.renameSync(`${options.saved}.tmp`, options.saved);
      return { agents: finish(agents), source: 'registry' };
    } catch (error) {
      const reason = error instanceof Error ? (error.name === 'TimeoutError' ? `no answer in ${(options.timeoutMs ?? FETCH_TIMEOUT_MS) / 1000} s` : error.cause instanceof Error ? error.cause.message : error.message) : String(error);
      note = `the registry (${options.url}) could not be read: ${reason}`;
      options.log?.warn(`catalogue: ${note}`);
    }
  } else if (!options.url) {
    note = 'symposium.catalogue.url is empty';
  }
  if (savedAge < MAX_AGE_MS) {
    try {
      const { agents } = parseRegistry(applyOverrides(readJson(options.saved), overrides));
      if (agents.length) {
        return { agents: finish(agents), source: 'saved', note: note ?? `saved ${Math.round(savedAge / 60_000)} minutes ago` };
      }
    } catch {
      // not readable: the shipped copy
    }
  } else if (savedAge !== Infinity) {
    note = `${note ?? ''}${note ? '; ' : ''}the copy saved from the registry is older than ${MAX_AGE_MS / 86_400_000} days`;
  }
  if (shipped.length) {
    return { agents: finish(shipped), source: 'shipped', note };
  }
  throw new Error(`No agent catalogue: ${note ?? ''}; and the one shipped with the extension (${options.shipped}) cannot be read`);
}

export type Method = 'npx' | 'uvx' | 'binary';

/**
 * How we would install `agent` here: npm, then PyPI, then a binary for this platform. A package
 * first: its registry checks its integrity, where a binary may come with no sha256 at all.
 */
export function installMethod(agent: CatalogueAgent, platform = platformKey()): Method | undefined {
  if (agent.distribution.npx) {
    return 'npx';
  }
  if (agent.distribution.uvx) {
    return 'uvx';
  }
  if (agent.distribution.binary?.[platform]) {
    return 'binary';
  }
  return undefined;
}
