// The extension's Windows branches, driven on Linux (docs/windows.md): each decision takes the
// platform (and the environment) as an argument, so the tests pass `win32` and a folder laid out as
// Windows lays it out. Real programs where they can run here: the npm install runs npm's own CLI
// script with the Node found as `node.exe`, and the stop sequence runs a real process.

import './vscode-stub';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { agentHostNotice, AgentHostContext, BYOK_SETTING, NOTICE, REMOTE_NOTICE, TURN_ON } from '../../agentHost';
import { installAgent } from '../../agents/install';
import { npmCommand } from '../../agents/installers/npm';
import { Backend } from '../../backend';
import { backendCommand, executableNames, findOnPath, joinCommandLine, splitCommandLine } from '../../config';
import { byFile, samePath } from '../../edits';
import { findPython, pythonCandidates, venvPython } from '../../setup';
import { EditPart } from '../../wire';
import { packEchoAgent } from '../fixtures';
import { MemoryLog } from './log';

let dir: string;
before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'symposium-windows-'));
});
after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A folder with these files (a `#!` script where content is given, made executable). */
function folder(name: string, files: Record<string, string>): string {
  const at = path.join(dir, name);
  for (const [file, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(at, file)), { recursive: true });
    fs.writeFileSync(path.join(at, file), content, { mode: 0o755 });
  }
  return at;
}

const PATHEXT = '.COM;.EXE;.BAT;.CMD;.VBS;.VBE;.JS;.JSE;.WSF;.WSH;.MSC';

describe('finding programs on Windows', () => {
  it('looks names up through PATHEXT, never as the extension-less file or the .cmd beside them', () => {
    const node = folder('nodejs', { npm: '#!/bin/sh\n', 'npm.cmd': '', 'node.exe': '', 'python.exe': '', 'pyenv/python.bat': '' });
    assert.deepEqual(executableNames('python', 'win32', PATHEXT), ['python.com', 'python.exe']); // what Node can spawn without a shell
    assert.deepEqual(executableNames('npm.cmd', 'win32', PATHEXT), ['npm.cmd']);
    assert.deepEqual(executableNames('python', 'linux', PATHEXT), ['python']);
    assert.equal(findOnPath('python', `C:\\nowhere;${path.join(node, 'pyenv')};${node}`, 'win32', PATHEXT), path.join(node, 'python.exe'));
    assert.equal(findOnPath('npm', node, 'win32', PATHEXT), undefined); // npm.cmd cannot be spawned; npm's own CLI script is run instead
    assert.equal(findOnPath('npm.cmd', node, 'win32', PATHEXT), path.join(node, 'npm.cmd'));
    assert.equal(findOnPath('python', node, 'win32', '.COM'), undefined); // only what PATHEXT allows
    assert.equal(findOnPath('npm', node, 'linux'), path.join(node, 'npm'));
    assert.equal(findOnPath('node', `"${node}"`, 'win32', ''), path.join(node, 'node.exe')); // a quoted PATH entry; PATHEXT unset
  });

  it('tries the py launcher first, with -3, then python', async () => {
    assert.deepEqual(pythonCandidates('win32').map((c) => [c.name, ...c.args].join(' ')), ['py -3', 'python', 'python3']);
    assert.equal(pythonCandidates('linux')[0].name, 'python3.14');
    // py.exe answers only when asked for Python 3; python.exe is too old.
    const bin = folder('pythons', {
      'py.exe': `#!/bin/sh\n[ "$1" = -3 ] || exit 1\necho C:/Python313/python.exe\necho 3.13.1\n`,
      'python.exe': '#!/bin/sh\necho C:/Python39/python.exe\necho 3.9.0\n',
    });
    assert.deepEqual(await findPython('', { PATH: bin, PATHEXT }, 'win32'), { path: 'C:/Python313/python.exe', version: '3.13.1' });
    fs.rmSync(path.join(bin, 'py.exe'));
    await assert.rejects(findPython('', { Path: bin, PATHEXT }, 'win32'), /python\.exe is 3\.9\.0/);
  });

  it("uses the venv's Scripts folder", () => {
    assert.equal(venvPython('venv', 'win32'), path.join('venv', 'Scripts', 'python.exe'));
    assert.equal(venvPython('venv', 'linux'), path.join('venv', 'bin', 'python'));
  });
});

describe('command lines typed on Windows', () => {
  it('keeps backslashes: they are the paths\' separators', () => {
    assert.deepEqual(splitCommandLine('C:\\Python313\\python.exe -m symposium', 'win32'), ['C:\\Python313\\python.exe', '-m', 'symposium']);
    assert.deepEqual(splitCommandLine('"C:\\Program Files\\Python\\python.exe" -I', 'win32'), ['C:\\Program Files\\Python\\python.exe', '-I']);
    assert.deepEqual(splitCommandLine('C:\\Python313\\python.exe', 'linux'), ['C:Python313python.exe']); // elsewhere a backslash escapes
    const words = ['C:\\Program Files\\agent.exe', '--flag', 'it\'s', 'say "hi"', ''];
    assert.deepEqual(splitCommandLine(joinCommandLine(words, 'win32'), 'win32'), words);
    assert.equal(joinCommandLine(['C:\\x\\python.exe', '-I'], 'win32'), 'C:\\x\\python.exe -I');
    const command = backendCommand({ command: 'C:\\venv\\Scripts\\python.exe -I -m symposium', traceDir: '', logLevel: '' }, {}, 'win32');
    assert.deepEqual(command, { command: 'C:\\venv\\Scripts\\python.exe', args: ['-I', '-m', 'symposium', 'vscodelm'] });
  });
});

describe('npm on Windows', () => {
  it("runs as node.exe with npm's own CLI script, found beside npm.cmd", () => {
    const node = folder('nodejs-npm', { 'node.exe': '', npm: '', 'npm.cmd': '', 'node_modules/npm/bin/npm-cli.js': '' });
    assert.deepEqual(npmCommand({ Path: node, PATHEXT }, 'win32'), {
      node: path.join(node, 'node.exe'),
      npm: [path.join(node, 'node.exe'), path.join(node, 'node_modules', 'npm', 'bin', 'npm-cli.js')],
    });
    assert.deepEqual(npmCommand({ PATH: node }, 'linux'), { node: undefined, npm: [path.join(node, 'npm')] });
    const bare = folder('nodejs-bare', { 'node.exe': '' });
    assert.equal(npmCommand({ PATH: bare, PATHEXT }, 'win32').npm, undefined); // no npm: said as such by the install
  });

  it('installs an npm agent for real that way, and records node.exe as its command', async () => {
    // A Node folder laid out as Node's Windows installer lays it out: node.exe (this node), npm.cmd, npm's
    // package under node_modules, and the extension-less `npm` script, which must not run.
    const realNpm = fs.realpathSync(findOnPath('npm', process.env.PATH ?? '', 'linux')!);
    const nodejs = folder('nodejs-real', { npm: '#!/bin/sh\necho the shell script ran >&2\nexit 99\n', 'npm.cmd': '' });
    fs.symlinkSync(process.execPath, path.join(nodejs, 'node.exe'));
    fs.mkdirSync(path.join(nodejs, 'node_modules'));
    fs.symlinkSync(path.dirname(path.dirname(realNpm)), path.join(nodejs, 'node_modules', 'npm'));
    const tarball = await packEchoAgent(dir);
    const record = await installAgent(
      { id: 'echo-win', name: 'Test echo-win', version: '1.0.0', description: 'echo', distribution: { npx: { package: tarball } } },
      { root: path.join(dir, 'agents'), python: () => findPython(''), log: new MemoryLog(), env: { ...process.env, PATH: nodejs, PATHEXT }, platform: 'windows-x86_64' },
    );
    assert.equal(record.command, path.join(nodejs, 'node.exe'));
    assert.ok(fs.existsSync(record.args[0]), record.args[0]);
  });
});

describe('stopping the backend on Windows', () => {
  // A backend stand-in: it ends by itself (code 0) a moment after its input ends, unless told to
  // ignore that; SIGTERM ends it with code 3 (Windows has no SIGTERM to send).
  const script = (ignoreEof: boolean) => `
    process.on('SIGTERM', () => process.exit(3));
    process.stdin.on('end', () => { if (!${ignoreEof}) setTimeout(() => process.exit(0), 100); });
    process.stdin.resume();
    setInterval(() => {}, 1000);
    process.stdout.write('{"jsonrpc":"2.0","method":"ready","params":{}}\\n');
  `;

  async function stopped(platform: NodeJS.Platform, ignoreEof: boolean): Promise<string> {
    const log = new MemoryLog();
    let ready!: () => void;
    const started = new Promise<void>((resolve) => (ready = resolve));
    const backend = new Backend(() => ({ command: process.execPath, args: ['-e', script(ignoreEof)] }), log, { onNotification: () => ready() }, undefined, { platform, graceMs: 300 });
    void backend.request('anything', {}).catch(() => undefined); // starts it
    await started;
    await backend.stop();
    return log.lines.find((l) => l.includes('backend stopped')) ?? log.lines.join('\n');
  }

  it('closes its input and lets it end by itself (no TerminateProcess, which would leave its agents running)', async () => {
    assert.match(await stopped('win32', false), /exited with code 0/);
    assert.match(await stopped('linux', false), /exited with code 3/); // elsewhere SIGTERM says the same at once
  });

  it('kills it when it has not ended after the grace', async () => {
    assert.match(await stopped('win32', true), /signal SIGKILL/);
  });
});

describe("Revert Agent Edits' paths on Windows", () => {
  it('compares paths case-insensitively, and `/` as `\\`', () => {
    assert.ok(samePath('c:\\Users\\ada\\app.py', 'C:/users/ada/APP.py', 'win32'));
    assert.ok(!samePath('c:\\Users\\ada\\app.py', 'C:/users/ada/APP.py', 'linux'));
    assert.ok(!samePath('C:\\a\\app.py', 'C:\\b\\app.py', 'win32'));
    const edit = (p: string, newText: string): EditPart => ({ type: 'edit', path: p, newText, oldText: 'old', conversation: 'c' });
    const files = byFile({ edits: [edit('C:\\w\\app.py', 'one'), edit('c:\\w\\App.py', 'two')] }, 'win32');
    assert.deepEqual([...files.keys()], ['C:\\w\\app.py']); // one file, undone as one
    assert.equal(files.get('C:\\w\\app.py')?.length, 2);
    assert.equal(byFile({ edits: [edit('/w/app.py', 'one'), edit('/w/App.py', 'two')] }, 'linux').size, 2);
  });
});

describe("Copilot Chat's agent host", () => {
  /** `known`: whether this VS Code has the setting (1.139, code-server's, has it already). */
  function context(known: boolean, setting: boolean | undefined, choice?: string, remote?: string) {
    const state = { shown: false, enabled: setting, asked: [] as string[][] };
    const ctx: AgentHostContext = {
      version: '1.139.1',
      knowsSetting: () => known,
      byokModels: () => state.enabled,
      remote,
      enable: async () => {
        state.enabled = true;
      },
      shown: () => state.shown,
      markShown: () => {
        state.shown = true;
      },
      ask: async (message, ...buttons) => {
        state.asked.push([message, ...buttons]);
        return choice;
      },
      log: new MemoryLog(),
    };
    return { ctx, state };
  }

  it('tells the user once where the setting exists, and turns it on when asked', async () => {
    const { ctx, state } = context(true, undefined, TURN_ON);
    assert.equal(await agentHostNotice(ctx), 'turned on');
    assert.equal(state.enabled, true);
    assert.equal(state.asked.length, 1);
    assert.equal(state.asked[0][0], NOTICE);
    assert.match(NOTICE, new RegExp(`${BYOK_SETTING.replace(/\./g, '\\.')} is on \\(it is off\\)`));
    assert.match(NOTICE, /Turn On sets it in your user settings/); // what the button does
    assert.deepEqual(state.asked[0].slice(1), [TURN_ON, 'Not Now']);
  });

  it('says nothing again once shown, even when left off', async () => {
    const { ctx, state } = context(true, false, 'Not Now');
    assert.equal(await agentHostNotice(ctx), 'left off');
    assert.equal(await agentHostNotice(ctx), 'shown before');
    assert.equal(state.asked.length, 1);
    assert.equal(state.enabled, false);
  });

  it('says nothing where VS Code has no such setting, or it is on in a local window', async () => {
    for (const [known, setting] of [[false, undefined], [false, false], [true, true]] as const) {
      const { ctx, state } = context(known, setting, TURN_ON);
      assert.equal(await agentHostNotice(ctx), 'not needed');
      assert.equal(state.asked.length, 0);
    }
  });

  it('in a remote window says the Local harness is where our models work, and offers nothing to turn on', async () => {
    for (const [remote, setting] of [['web', undefined], ['ssh-remote', true], ['wsl', false]] as const) {
      const { ctx, state } = context(true, setting, TURN_ON, remote);
      assert.equal(await agentHostNotice(ctx), 'told remote');
      assert.deepEqual(state.asked, [[REMOTE_NOTICE]], 'no button: turning the setting on changes nothing there');
      assert.equal(state.enabled, setting);
      assert.match(REMOTE_NOTICE, /Local harness/);
      assert.equal(await agentHostNotice(ctx), 'shown before');
    }
  });
});
