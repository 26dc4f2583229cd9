// The ACP registry's format (`registry.json`: id, name, version, description, distribution with npx /
// uvx / per-platform binary) as pure functions: reading an entry into a `CatalogueAgent` (or saying
// why not), comparing versions, applying our overrides (`catalogue/overrides.json`), and the rule
// that a refresh never goes backwards. No I/O: fetching and the saved copies are `catalogue.ts`'s
// (docs/usage.md, "The catalogue"). No `vscode` import, so the unit tests run it in plain node.

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
// name (protocol/acp/agent_text.py): controls and line breaks become spaces; bidi controls and
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

/** Whether two versions are one (`2698.3` is `2698.3.0`; `v1.2.3` is `1.2.3`). */
export function sameVersion(a: string, b: string): boolean {
  return a === b || compareVersions(a, b) === 0;
}

const LOCATION = /^(https?:|file:|\/|\.|[A-Za-z]:[\\/])|\.(tgz|tar\.gz|whl|zip)$/;
/** One version, not a range or a tag: semver's for npm, PEP 440's for PyPI. */
const EXACT = {
  npx: /^v?\d+(\.\d+)*(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/,
  uvx: /^v?\d+(\.\d+)*((a|b|rc|\.?post|\.?dev)\d*)*(\+[0-9A-Za-z.]+)?$/i,
};

/**
 * The version a package spec installs: npm's `name@1.2.3` / `@scope/name@1.2.3`, PyPI's
 * `name==1.2.3` / `name[extra]==1.2.3` / `name@1.2.3`; for a tarball, wheel or archive, the version
 * its location names (`locationVersion`). Undefined when it installs whatever is newest (no version,
 * a range, a tag): nothing then says what was installed.
 */
export function pinnedVersion(kind: 'npx' | 'uvx', spec: string, expected?: string): string | undefined {
  if (LOCATION.test(spec)) {
    return locationVersion(spec, expected);
  }
  const match = kind === 'npx'
    ? /^(?:@[^/@\s]+\/[^@\s]+|[^@\s]+)@(\S+)$/.exec(spec)
    : /^[A-Za-z0-9][A-Za-z0-9._-]*(?:\[[^\]]*\])?(?:==|@)(\S+)$/.exec(spec);
  return match && EXACT[kind].test(match[1]) ? match[1] : undefined;
}

/**
 * The version a download's location names, when it names one (`.../v1.50.1/goose-....tar.bz2`,
 * `.../2698.3/junie-release-2698.3-....zip`, `echo-agent-1.0.0.tgz`): `expected` when it names that
 * one among others, else the first it names; '' when it names none (nothing to compare: its hash
 * is what checks it). Only the path is read: a host's numbers are not a version.
 */
export function locationVersion(location: string, expected?: string): string {
  let where = location;
  try {
    where = new URL(location).pathname;
  } catch {
    // a file path
  }
  const named = [...where.matchAll(/(?<![0-9A-Za-z.])v?(\d+(?:\.\d+)+)(?!\.?\d)/g)].map((m) => m[1]);
  if (!named.length) {
    return '';
  }
  const bare = expected?.replace(/^v/i, '').split('+')[0];
  return expected && (named.some((v) => sameVersion(v, expected)) || (bare && where.includes(bare))) ? expected : named[0];
}

/**
 * The usable agents of a `registry.json`, and a complaint for each entry, or way to install one, left
 * out. Unknown fields are ignored (the format grows); an id must be safe as a folder name; names and
 * descriptions are shown cleaned (`shown`): the catalogue is somebody else's file. A package or
 * download that would install another version than the entry's `version` (or whichever is newest)
 * is refused: what Add Agent records is the version it installs.
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
    // Each way to install it must install `version`, or what is installed is not what is recorded.
    const agrees = (how: string, installs: string | undefined, what: string): boolean => {
      const disagreement = installs === undefined
        ? `its ${how} ${what} is not pinned to one version`
        : installs && !sameVersion(installs, entry.version!) ? `it says version ${entry.version}, but its ${how} ${what} installs ${installs}` : '';
      if (disagreement) {
        problems.push(`${where}: ${disagreement}: refused`);
      }
      return !disagreement;
    };
    const npx = packageDistribution(dist.npx);
    const uvx = packageDistribution(dist.uvx);
    if (npx && agrees('npm package', pinnedVersion('npx', npx.package, entry.version), npx.package)) {
      distribution.npx = npx;
    }
    if (uvx && agrees('PyPI package', pinnedVersion('uvx', uvx.package, entry.version), uvx.package)) {
      distribution.uvx = uvx;
    }
    if (dist.binary && typeof dist.binary === 'object') {
      const targets: Record<string, BinaryTarget> = {};
      for (const [platform, target] of Object.entries(dist.binary as Record<string, unknown>)) {
        const parsed = binaryTarget(target);
        if (parsed && agrees(`${platform} download`, locationVersion(parsed.archive, entry.version), parsed.archive)) {
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

/**
 * The field with which a registry marks an entry it lists older than one it listed before, on
 * purpose (a release withdrawn): `"downgrade": true`. Only such an entry takes an older version's
 * place.
 */
export const DOWNGRADE = 'downgrade';

/** A catalogue a refresh must not go back from, and how the log names it. */
export interface Floor {
  json: unknown;
  label: string;
}

/**
 * `fresh` (a registry's `registry.json`, raw) with each entry that lists an older version than one
 * of `floors` (the shipped catalogue, the copy saved from the registry before) replaced by the
 * newest of those, unless the registry marks it (`DOWNGRADE`). `kept` says, per id, which version
 * was kept and why. Ids the registry no longer lists stay gone: that is not going back.
 */
export function neverOlder(fresh: unknown, floors: Floor[]): { json: unknown; kept: string[] } {
  const list = (fresh as { agents?: unknown })?.agents;
  if (!Array.isArray(list)) {
    return { json: fresh, kept: [] };
  }
  const newest = new Map<string, { raw: unknown; version: string; label: string }>();
  for (const floor of floors) {
    const entries = (floor.json as { agents?: unknown })?.agents;
    for (const raw of Array.isArray(entries) ? entries : []) {
      const [agent] = parseRegistry({ agents: [raw] }).agents;
      const seen = agent && newest.get(agent.id);
      if (agent && (!seen || compareVersions(agent.version, seen.version) > 0)) {
        newest.set(agent.id, { raw, version: agent.version, label: floor.label });
      }
    }
  }
  const kept: string[] = [];
  const agents = list.map((raw) => {
    const entry = raw as { id?: unknown; version?: unknown; [DOWNGRADE]?: unknown };
    const floor = typeof entry?.id === 'string' ? newest.get(entry.id) : undefined;
    if (!floor || typeof entry.version !== 'string' || compareVersions(entry.version, floor.version) >= 0) {
      return raw;
    }
    if (entry[DOWNGRADE] === true) {
      kept.push(`${entry.id}: the registry marks ${entry.version} as a downgrade from ${floor.version} (${floor.label}): ${entry.version} offered`);
      return raw;
    }
    kept.push(`${entry.id}: the registry lists ${entry.version}, older than ${floor.version} (${floor.label}): ${floor.version} kept`);
    return JSON.parse(JSON.stringify(floor.raw)) as unknown;
  });
  return { json: { ...(fresh as object), agents }, kept };
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

/**
 * `agents` with what we know beyond the registry: the sha256 our build recorded for a download the
 * registry gives none for (from the shipped catalogue, by archive URL), and why an npm package's
 * install scripts run (overrides' `npmScripts`).
 */
export function withOurKnowledge(agents: CatalogueAgent[], overrides: Overrides, shipped: CatalogueAgent[]): CatalogueAgent[] {
  const hashes = new Map<string, string>();
  for (const agent of shipped) {
    for (const target of Object.values(agent.distribution.binary ?? {})) {
      if (target.recordedSha256) {
        hashes.set(target.archive, target.recordedSha256);
      }
    }
  }
  return agents.map((agent) => {
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
