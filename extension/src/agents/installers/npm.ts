// npm agents: `npm install --prefix` (install scripts not run unless the catalogue's overrides list the
// package, with why), run with a Node on their bin script, never through npx. The Node and the npm are
// PATH's when new enough for the package, else VS Code's own Node and the npm the vsix carries
// (`runtimes.ts`). No `vscode` import, so the unit tests run it in plain node.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { CatalogueAgent, npmName } from '../registry';
import { findOnPath } from '../../config';
import { run, Run, SetupError } from '../../setup';
import { Installed, Installer, InstallOptions, inside } from './common';
import { NodeRuntime, nodeSatisfies } from '../../runtimes';
import { platformKey } from '../registry';

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

async function install(agent: CatalogueAgent, building: string, folder: string, options: InstallOptions): Promise<Installed> {
  const dist = agent.distribution.npx!;
  const env = options.env ?? process.env;
  const windows = (options.platform ?? platformKey()).startsWith('windows-'); // only Windows runs npm differently
  const onPath = npmCommand(env, windows ? 'win32' : 'linux');
  const host = options.node;
  // PATH's npm where there is one (the user's npm configuration is theirs); else the vsix's, on VS Code's Node.
  const useHost = !(onPath.npm && onPath.node) && Boolean(host?.npmCli);
  const npm = useHost ? [host!.node, host!.npmCli!()] : onPath.npm;
  if (!npm) {
    throw new SetupError(
      `${agent.name} is an npm package: installing it needs npm, and there is no ${onPath.node ? 'npm' : 'Node.js'} on PATH (and this build of Symposium carries none)`,
      'Install Node.js 20 or later (it brings npm), or install a Symposium package for your platform, then add the agent again.',
    );
  }
  const npmEnv = useHost ? { ...env, ...host!.env } : env;
  // Install scripts run only for packages that need them (catalogue/overrides.json, `npmScripts`).
  const scripts = Boolean(agent.installScripts);
  const args = ['install', '--prefix', building, '--no-audit', '--no-fund', '--loglevel=error', '--omit=dev', ...(scripts ? [] : ['--ignore-scripts']), dist.package];
  options.log.info(`installing ${agent.name}: ${[...npm, ...args].join(' ')}${scripts ? ` (its install scripts run: ${agent.installScripts})` : ''}`);
  const done = await runNpm(npm, args, npmEnv);
  if (done.code !== 0) {
    const output = `${done.stderr}\n${done.stdout}`;
    const detail = output.trim().split(/\r?\n/).slice(-12).join('\n');
    const failure = classifyNpmFailure(output);
    const name = npmName(dist.package);
    switch (failure.kind) {
      case 'missing-version': {
        const latest = await runNpm(npm, ['view', name, 'version'], npmEnv, 60_000);
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
  const packageDir = path.join(building, 'node_modules', names[0]);
  const bin = binScript(packageDir, names[0], building);
  const runtime = await nodeFor(agent, packageDir, onPath.node, host, npmEnv);
  options.log.info(`${agent.name} runs on ${runtime.command}${runtime.env.ELECTRON_RUN_AS_NODE ? ' (VS Code\'s own Node, ELECTRON_RUN_AS_NODE=1)' : ''}`);
  return {
    source: dist.package,
    command: runtime.command,
    args: [path.join(folder, 'node_modules', names[0], bin), ...(dist.args ?? [])],
    env: { ...runtime.env, ...(dist.env ?? {}) },
    installScripts: scripts,
  };
}

/**
 * The Node an installed package runs on: PATH's when its version meets the package's `engines.node`
 * (or the package names none), else VS Code's own (the extension host's executable) when it does;
 * else an error naming the version the package needs.
 */
async function nodeFor(agent: CatalogueAgent, packageDir: string, pathNode: string | undefined, host: NodeRuntime | undefined, env: NodeJS.ProcessEnv): Promise<{ command: string; env: Record<string, string> }> {
  const manifest = JSON.parse(fs.readFileSync(path.join(packageDir, 'package.json'), 'utf8')) as { engines?: { node?: unknown } };
  const range = typeof manifest.engines?.node === 'string' ? manifest.engines.node.trim() : '';
  const pathVersion = pathNode ? (await run(pathNode, ['--version'], { env, timeoutMs: 20_000 })).stdout.trim() : '';
  if (pathNode && pathVersion && (!range || nodeSatisfies(range, pathVersion))) {
    return { command: pathNode, env: {} };
  }
  if (host && (!range || nodeSatisfies(range, host.version))) {
    return { command: host.node, env: host.env };
  }
  if (!host && pathNode) {
    return { command: pathNode, env: {} }; // no other Node to offer: npm warned, as it does on the command line
  }
  const found = [host ? `VS Code's own is ${host.version}` : '', pathNode ? `PATH's is ${pathVersion || 'one that does not run'}` : 'there is none on PATH'].filter(Boolean).join(', and ');
  throw new SetupError(
    `${agent.name} ${agent.version} needs Node.js ${range}; ${found}`,
    `Install Node.js ${range} (nodejs.org, or your system's packages) and put it on PATH, then add the agent again.`,
  );
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

export const npmInstaller: Installer = { install, inPlace: false };
